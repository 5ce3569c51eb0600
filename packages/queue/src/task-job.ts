/** The data of a BullMQ job: a pointer to the task; Postgres holds everything else. */
export interface TaskJobData {
  taskId: string;
  tenantId: string;
  queueId: string;
  dispatchGeneration: number;
  /** The lane it was submitted in (BullMQ priority: 1 HIGH, 2 NORMAL, 3 LOW); aging moves it up one. */
  lane?: number;
}
