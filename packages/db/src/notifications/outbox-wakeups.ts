import type pg from "pg";
import { dedicatedClient } from "../database.js";

/** The channel the outbox_notify trigger signals when a committed statement wrote NOTIFY outbox rows. */
export const OUTBOX_NOTIFY_CHANNEL = "tasklane_outbox";

export interface OutboxWakeups {
  close(): Promise<void>;
}

/**
 * Calls `onWake` whenever a committed statement wrote NOTIFY outbox rows
 * (migration outbox_notify_wakeup), over a session of its own that LISTENs.
 * Also once each time the session is (re)opened: what was committed while
 * nobody listened sent no notification that will ever arrive. A lost session
 * is opened again after `retryMs`; meanwhile the caller's polling carries on.
 */
export function listenForOutboxWakeups(url: string, onWake: () => void, onError: (error: unknown) => void, retryMs = 1_000): OutboxWakeups {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;

  const open = async (): Promise<void> => {
    const client = dedicatedClient(url, "tasklane-outbox-wakeups");
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
    client.on("notification", () => onWake());
    client.on("error", reopen);
    client.on("end", () => reopen());
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_NOTIFY_CHANNEL}`);
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
    async close() {
      closed = true;
      clearTimeout(retry);
      const client = current;
      current = undefined;
      await client?.end().catch(() => undefined);
    },
  };
}
