import { promoteDueTasks } from "@tasklane/db";
import type { SchedulerContext } from "../context.js";

const BATCH = 2000;

/** SCHEDULED/RETRYING tasks past their runAt are reported as QUEUED. */
export async function promoteDueStatuses(ctx: SchedulerContext): Promise<boolean> {
  return (await promoteDueTasks(ctx.db, BATCH)) === BATCH;
}
