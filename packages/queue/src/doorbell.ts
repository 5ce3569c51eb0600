/**
 * The workers' doorbell message (KeySpace.doorbellChannel): the BullMQ queue
 * name, and, when every job the add call carried is delayed, the earliest
 * one's due time (ms since the epoch) after a space. A worker that hears a
 * delayed-only ring need not look at the queue before that job is due within
 * its look-ahead: at a steady rate of delayed submissions, a look per ring
 * would take a job or two at a time, each with its own start statement.
 * A worker from before this format finds no queue of that name and ignores
 * the ring: during a rolling upgrade it meets such a queue at its
 * once-a-second re-read of the active set instead.
 */
export interface Doorbell {
  queueName: string;
  /** The earliest job's due time when all are delayed; null when some job is due now. */
  dueAt: number | null;
}

export function doorbellMessage({ queueName, dueAt }: Doorbell): string {
  return dueAt === null ? queueName : `${queueName} ${dueAt}`;
}

/** Parses doorbellMessage's output; a bare name (or a due time that is not a number) rings as due now. */
export function parseDoorbell(message: string): Doorbell {
  const space = message.indexOf(" ");
  if (space < 0) return { queueName: message, dueAt: null };
  const dueAt = Number(message.slice(space + 1));
  return { queueName: message.slice(0, space), dueAt: Number.isFinite(dueAt) ? dueAt : null };
}
