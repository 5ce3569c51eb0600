/**
 * Where a resumed subscription's catch-up reads (catch-up.ts): the relay's
 * saved cursor and the subscription's events, from Postgres, as hub events.
 */
import { readReplayPage, type Database, type ReplayFilter } from "@tasklane/db";
import { taskEventMessageOf } from "@tasklane/queue";
import type { CatchUpReads } from "./catch-up.js";
import type { HubEvent, TaskLoader } from "./event-hub.js";

export interface ReplayReadsOptions {
  loadTask: TaskLoader;
  /** The gateway's one reader of the relay's cursor, shared by every catch-up (next-read.ts). */
  relayCursor(): Promise<bigint | null>;
  /** Runs one page's read when the tenant and the gateway have room for it. */
  pageSlot<T>(tenantId: string, read: () => Promise<T>): Promise<T>;
}

export function eventReplayReads(db: Database, filter: ReplayFilter, opts: ReplayReadsOptions): CatchUpReads {
  const { loadTask } = opts;
  return {
    relayCursor: opts.relayCursor,
    async page(after, through) {
      const page = await opts.pageSlot(filter.tenantId, () => readReplayPage(db.pool, filter, after, through));
      const events: HubEvent[] = [];
      for (const row of page.events) {
        const message = taskEventMessageOf(row);
        if (message !== null) events.push({ message, task: () => loadTask(row.tenantId, row.taskId) });
      }
      return { events, readTo: page.readTo };
    },
  };
}
