import { listenForWakeups, type Wakeups } from "./listen-wakeups.js";

/** The channel the outbox_notify trigger signals when a committed statement wrote NOTIFY outbox rows. */
export const OUTBOX_NOTIFY_CHANNEL = "tasklane_outbox";

/**
 * Calls `onWake` whenever a committed statement wrote NOTIFY outbox rows
 * (migration outbox_notify_wakeup), and each time its session is (re)opened.
 */
export function listenForOutboxWakeups(url: string, onWake: () => void, onError: (error: unknown) => void, retryMs = 1_000): Wakeups {
  return listenForWakeups({ url, channel: OUTBOX_NOTIFY_CHANNEL, applicationName: "tasklane-outbox-wakeups", onWake, onError, retryMs });
}
