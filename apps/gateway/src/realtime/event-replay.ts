/**
 * Where a resumed subscription's catch-up reads (catch-up.ts): the relay's
 * saved cursor and the subscription's events, from Postgres, as hub events.
 */
import { readReplayPage, type Database, type ReplayFilter } from "@tasklane/db";
import { taskEventMessageOf } from "@tasklane/queue";
import type { CatchUpReads } from "./catch-up.js";
import type { HubEvent, TaskLoader } from "./event-hub.js";

/** `relayCursor`: the gateway's one reader of the relay's cursor, shared by every catch-up (next-read.ts). */
export function eventReplayReads(db: Database, filter: ReplayFilter, loadTask: TaskLoader, relayCursor: () => Promise<bigint | null>): CatchUpReads {
  return {
    relayCursor,
    async page(after, through) {
      const page = await readReplayPage(db.pool, filter, after, through);
      const events: HubEvent[] = [];
      for (const row of page.events) {
        const message = taskEventMessageOf(row);
        if (message !== null) events.push({ message, task: () => loadTask(row.tenantId, row.taskId) });
      }
      return { events, readTo: page.readTo };
    },
  };
}
