import { expireLeases } from "@tasklane/db";
import { dispatchAfterCommit } from "@tasklane/queue";
import type { SchedulerContext } from "../context.js";

const BATCH = 500;

/** Tasks whose executor died or stalled past its lease run again (or die). */
export async function expireStaleLeases(ctx: SchedulerContext): Promise<boolean> {
  const { expired, dispatch } = await expireLeases(ctx.db, BATCH, ctx.horizonMs);
  ctx.metrics.leaseExpirations.inc(expired);
  if (expired > 0) ctx.log.info({ expired }, "leases expired");
  await dispatchAfterCommit(ctx.db, ctx.dispatcher, dispatch, (error) => ctx.log.warn({ err: error }, "fast dispatch failed; outbox will retry"));
  return expired === BATCH;
}
