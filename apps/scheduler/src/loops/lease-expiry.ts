import { expireLeases } from "@tasklane/db";
import { dispatchAfterCommit } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

const BATCH = 500;

/** Tasks whose executor died or stalled past its lease, or whose PULL attempt timed out, run again (or die). */
export async function expireStaleLeases(ctx: SchedulerContext): Promise<boolean> {
  const { expired, timedOut, dispatch } = await expireLeases(ctx.db, BATCH, ctx.horizonMs);
  // Apart: TasklaneLeaseExpirationsHigh means executors dying, and a slow PULL handler is not one.
  ctx.metrics.leaseExpirations.inc(expired);
  ctx.metrics.pullTimeouts.inc({ outcome: "timed_out" }, timedOut.retried);
  ctx.metrics.pullTimeouts.inc({ outcome: "dead" }, timedOut.dead);
  const ended = expired + timedOut.retried + timedOut.dead;
  if (ended > 0) ctx.log.info({ expired, timedOut: timedOut.retried + timedOut.dead }, "leases expired");
  await dispatchAfterCommit(ctx.db, ctx.dispatcher, dispatch, (error) => ctx.log.warn({ err: error }, "fast dispatch failed; outbox will retry"));
  return ended === BATCH;
}
