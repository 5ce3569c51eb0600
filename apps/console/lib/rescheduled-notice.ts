/** What the task page says after its "Run now" or "Reschedule" (tasks/reschedule-actions.ts sends it there with ?rescheduled=). */
export const RESCHEDULED_NOTICES = {
  now: "Task due now: it runs as soon as a worker is free.",
  later: "Task rescheduled: it runs at its new time.",
} as const;

export type RescheduledNotice = keyof typeof RESCHEDULED_NOTICES;

export function isRescheduledNotice(value: unknown): value is RescheduledNotice {
  return typeof value === "string" && Object.hasOwn(RESCHEDULED_NOTICES, value);
}

