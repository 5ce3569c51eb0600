/**
 * The body POSTed to a PUSH queue's endpoint. Built in one place because the
 * exact bytes are what gets signed.
 */

export interface PushBodyInput {
  taskId: string;
  type: string;
  payload: unknown;
  /** 1-based number of this attempt. */
  attempt: number;
  /** Results of upstream workflow tasks, keyed by workflow task key; only sent for workflow tasks. */
  parents?: Record<string, unknown>;
}

export function buildPushBody({ taskId, type, payload, attempt, parents }: PushBodyInput): string {
  // payload ?? null: JSON.stringify would drop an undefined key, and receivers
  // should always find the field.
  const body: Record<string, unknown> = { taskId, type, payload: payload ?? null, attempt };
  if (parents !== undefined) body["parents"] = parents;
  return JSON.stringify(body);
}
