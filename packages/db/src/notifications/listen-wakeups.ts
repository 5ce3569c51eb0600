import type pg from "pg";
import { dedicatedClient } from "../database.js";

export interface Wakeups {
  /** Whether a session LISTENs now: while it does not, nothing announces a commit and the caller must poll. */
  readonly listening: boolean;
  close(): Promise<void>;
}

/** A channel a trigger NOTIFYs at commit, and the application_name of the session that LISTENs to it (for pg_stat_activity). */
export interface WakeupChannel {
  readonly name: string;
  readonly applicationName: string;
}

/** Commits that wrote NOTIFY outbox rows (migration outbox_notify_wakeup): the notifier's fan-out. */
export const OUTBOX_WAKEUPS: WakeupChannel = { name: "tasklane_outbox", applicationName: "tasklane-outbox-wakeups" };
/**
 * The payload on OUTBOX_WAKEUPS of a commit that put deliveries back to PENDING, due now
 * (redeliver-deliveries.ts): nothing to fan out, the notifier's delivery loop is what wakes.
 * The outbox trigger's own notifications carry an empty payload.
 */
export const REDELIVERY_WAKEUP = "redelivery";
/** Commits that wrote schedules (migration schedule_notify_wakeup): the scheduler's cron loop. */
export const SCHEDULE_WAKEUPS: WakeupChannel = { name: "tasklane_schedules", applicationName: "tasklane-schedule-wakeups" };

export interface WakeupOptions {
  url: string;
  channel: WakeupChannel;
  /** The notification's payload; undefined when the session has just (re)opened. */
  onWake: (payload?: string) => void;
  onError: (error: unknown) => void;
  retryMs?: number;
}

/**
 * Calls `onWake` for every notification on `channel`, over a session of its
 * own that LISTENs. Also once each time the session is (re)opened: what was
 * committed while nobody listened sent no notification that will ever
 * arrive. A lost session is opened again after `retryMs`; meanwhile the
 * caller's polling carries on (`listening` is false).
 */
export function listenForWakeups(options: WakeupOptions): Wakeups {
  const { url, channel, onWake, onError, retryMs = 1_000 } = options;
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    const client = dedicatedClient(url, channel.applicationName);
    let lost = false;
    const reopen = (error?: unknown): void => {
      if (lost) return;
      lost = true;
      if (current === client) current = undefined;
      client.end().catch(() => undefined);
      if (closed) return;
      if (error !== undefined) onError(error);
      retry = setTimeout(() => void open(), retryMs);
    };
    client.on("notification", (message) => onWake(message.payload));
    client.on("error", reopen);
    client.on("end", () => reopen());
    try {
      await client.connect();
      await client.query(`LISTEN ${channel.name}`);
    } catch (error: unknown) {
      reopen(error);
      return;
    }
    if (closed || lost) {
      reopen();
      return;
    }
    current = client;
    onWake();
  };
  void open();

  return {
    get listening() {
      return current !== undefined;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}
