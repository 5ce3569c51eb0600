import { listenForWakeups, type Wakeups } from "../notifications/listen-wakeups.js";

/** The channel the schedules_notify trigger signals when a committed statement wrote schedules. */
export const SCHEDULES_NOTIFY_CHANNEL = "tasklane_schedules";

/**
 * Calls `onWake` whenever a committed statement wrote schedules (migration
 * schedule_notify_wakeup), and each time its session is (re)opened.
 */
export function listenForScheduleWakeups(url: string, onWake: () => void, onError: (error: unknown) => void, retryMs = 1_000): Wakeups {
  return listenForWakeups({ url, channel: SCHEDULES_NOTIFY_CHANNEL, applicationName: "tasklane-schedule-wakeups", onWake, onError, retryMs });
}
