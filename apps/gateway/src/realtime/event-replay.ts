/**
 * Where a resumed subscription's catch-up reads (catch-up.ts): the relay's
 * saved cursor and the subscription's events, from Postgres, as hub events.
 */
import { readReplayPage, type Database, type ReplayFilter } from "@tasklane/db";
import { taskEventMessageOf } from "@tasklane/queue";
import type { CatchUpReads } from "./catch-up.js";
import { chunkedTaskLoads, type TasksReader } from "./chunked-task-loads.js";
import type { HubEvent } from "./event-hub.js";

export interface ReplayReadsOptions {
  /** Reads the tasks of the events a chunk at a time as they are sent (chunked-task-loads.ts). */
  readTasks: TasksReader;
  /** The gateway's one reader of the relay's cursor, shared by every catch-up (next-read.ts). */
  relayCursor(): Promise<bigint | null>;
  /** Runs one page's read when the tenant and the gateway have room for it. */
  pageSlot<T>(tenantId: string, read: () => Promise<T>): Promise<T>;
}

export function eventReplayReads(db: Database, filter: ReplayFilter, opts: ReplayReadsOptions): CatchUpReads {
  return {
    relayCursor: opts.relayCursor,
    async page(after, through) {
      const page = await opts.pageSlot(filter.tenantId, () => readReplayPage(db.pool, filter, after, through));
      const sent = page.events.flatMap((row) => {
        const message = taskEventMessageOf(row);
        return message === null ? [] : [message];
      });
      const taskOf = chunkedTaskLoads(filter.tenantId, sent.map((m) => m.taskId), opts.readTasks);
      const events = sent.map((message, i): HubEvent => ({ message, task: () => taskOf(i) }));
      return { events, readTo: page.readTo };
    },
  };
}
