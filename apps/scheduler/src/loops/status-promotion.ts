import { promoteDueTasks } from "@tasklane/db";
import type { SchedulerContext } from "../context.js";

const BATCH = 2000;
/**
 * Only tasks still waiting this long after their runAt are promoted. A worker
 * usually starts a due task within milliseconds (SCHEDULED -> RUNNING is a
 * valid start); promoting it first would cost a second row write and audit
 * event per delayed task, and make the worker's start wait for the
 * promoter's row lock.
 */
const PROMOTION_GRACE_MS = 1000;

/** SCHEDULED/RETRYING tasks past their runAt are reported as QUEUED. */
export async function promoteDueStatuses(ctx: SchedulerContext): Promise<boolean> {
  return (await promoteDueTasks(ctx.db, BATCH, PROMOTION_GRACE_MS)) === BATCH;
}
