/** The data of a BullMQ job: a pointer to the task; Postgres holds everything else. */
export interface TaskJobData {
  taskId: string;
  tenantId: string;
  queueId: string;
  dispatchGeneration: number;
}
