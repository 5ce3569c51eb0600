import type { Logger } from "@tasklane/config";
import { TenantWalk } from "@tasklane/core";
import { claimDueDeliveries, recordDeliveryOutcome, type ClaimedDelivery, type Database, type DeliveryOutcome } from "@tasklane/db";
import { SpanKind, TaskAttr, endSpan, outboundTraceParent, startTaskSpan } from "@tasklane/observability";
import type { Agent } from "undici";
import type { NotifierMetrics } from "../metrics.js";
import type { InFlight } from "./in-flight.js";
import { decideOutcome } from "./retry-policy.js";
import { sendDelivery } from "./send-delivery.js";

/**
 * Request deadline: a receiver gets 10 s to answer, like most webhook senders
 * give. Its body gets at most BODY_GRACE_MS after the status, within the same
 * 10 s, and never changes the outcome (send-delivery.ts).
 */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Lock beyond the request timeout, for recording the outcome; a killed notifier's claims come back after timeout + margin. */
export const LOCK_MARGIN_MS = 5_000;
/**
 * Most deliveries in flight per tenant and receiver origin (scheme, host and
 * port) per notifier, so one slow receiver cannot take the whole pool, however
 * many URLs (paths, query strings) the tenant points at it.
 */
export const PER_ORIGIN_CONCURRENCY = 4;

/**
 * Most of the notifier's slots one tenant may hold while another tenant has
 * due work: half, so a tenant with many slow origins leaves the other half to
 * the rest. A tenant alone may use them all.
 */
export function tenantShare(concurrency: number): number {
  return Math.max(1, Math.ceil(concurrency / 2));
}
/**
 * What a tenant is owed while every slot is held: an equal part of the
 * slots among the tenants holding some and one more (the newcomer the claim
 * may find), at least one. A request cannot be taken back once sent, so
 * sharing only the free slots left a tenant whose first delivery came after
 * other tenants' slow receivers had taken every slot waiting for those
 * requests to time out (QA: ten tenants' hanging receivers held all 32
 * slots; another tenant's webhook left 8.8 s late). Up to this, a tenant
 * starts on a slot lent past NOTIFIER_CONCURRENCY (at most as many again),
 * as the worker fleet lends slots to a tenant under its share.
 */
export function owedShare(concurrency: number, tenantsHolding: number): number {
  return Math.max(1, Math.floor(concurrency / (tenantsHolding + 1)));
}

/** Most deliveries claimed per query. */
const CLAIM_BATCH = 200;
/**
 * Most tenants with PENDING deliveries one claim walks (~5 µs each, so ~5 ms);
 * past that many, successive claims take them in turn from where the last
 * one stopped.
 */
export const TENANT_WALK = 1_000;
/**
 * Claims in a row that walk on at once while they find nothing to start and
 * stop short of the last tenant: with up to this many times TENANT_WALK
 * tenants waiting, a delivery that falls due is found without waiting for a
 * poll.
 */
const WALK_ON = 8;

export interface DeliveryLoopDeps {
  db: Database;
  agent: Agent;
  log: Logger;
  metrics: NotifierMetrics;
  inFlight: InFlight;
  allowPrivate: boolean;
  retrySchedule: readonly number[];
  /** NOTIFIER_CONCURRENCY: slots shared between tenants; up to as many again lent to tenants under their owed share. */
  concurrency: number;
  /** Called when a slot frees up, to claim again without waiting out the poll interval. */
  onSlotFreed: () => void;
  /** Called when a failed delivery's next attempt is recorded, with its delay: claim again when it falls due. */
  onRetryScheduled: (delayMs: number) => void;
}

/**
 * One tick of the delivery loop: claim what fits in the free slots (with none
 * free, what tenants under their owed share may start), start each
 * delivery without waiting for it, and report whether to claim again at once:
 * the claim came back full (more is probably due), or found nothing among
 * the tenants it walked and more are left (up to WALK_ON walks in a row).
 */
export function createDeliveryTick(deps: DeliveryLoopDeps, walkLimit = TENANT_WALK): () => Promise<boolean> {
  const walk = new TenantWalk(WALK_ON);
  return async () => {
    const free = deps.concurrency - deps.inFlight.size;
    // Every slot held: only tenants under their owed share start, on lent slots (owedShare).
    const lending = free <= 0;
    const want = Math.min(lending ? 2 * deps.concurrency - deps.inFlight.size : free, CLAIM_BATCH);
    if (want <= 0) return false;
    const inFlight = deps.inFlight.counts();
    const { deliveries: claimed, walkedTo, truncated } = await claimDueDeliveries(deps.db, {
      limit: want,
      lockMs: REQUEST_TIMEOUT_MS + LOCK_MARGIN_MS,
      perOriginLimit: PER_ORIGIN_CONCURRENCY,
      tenantShare: lending ? owedShare(deps.concurrency, inFlight.byTenant.size) : tenantShare(deps.concurrency),
      shareAlone: lending,
      inFlight,
      afterTenant: walk.after,
      walkLimit,
    });
    for (const delivery of claimed) {
      deps.inFlight.track(delivery, runDelivery(deps, delivery).finally(deps.onSlotFreed));
    }
    // Nothing among the tenants walked, and more are left: walk on, up to WALK_ON windows; a poke or the poll starts again.
    if (walk.walked(walkedTo, claimed.length === 0 && truncated)) return true;
    return claimed.length === want;
  };
}

async function runDelivery(deps: DeliveryLoopDeps, delivery: ClaimedDelivery): Promise<void> {
  const started = process.hrtime.bigint();
  let outcome: DeliveryOutcome;
  /** Why a response's body was left unfinished: logged, never an outcome (the status decides). */
  let bodyCut: string | undefined;
  if (delivery.blockedReason !== null) {
    outcome = { kind: "abandoned", error: delivery.blockedReason };
  } else {
    // A task's delivery joins the task's trace; the receiver gets the span as its parent.
    const span = delivery.traceParent === null ? undefined : startTaskSpan("webhook.deliver", delivery.traceParent, {
      [TaskAttr.tenantId]: delivery.tenantId,
      [TaskAttr.deliveryId]: delivery.id,
      ...(delivery.taskId !== null ? { [TaskAttr.taskId]: delivery.taskId } : {}),
      // The delivery's own attempt: tasklane.attempt means the task's attempt on every span, and the delivery does not know it.
      [TaskAttr.deliveryAttempt]: delivery.attempts + 1,
      "tasklane.event": delivery.event,
    }, SpanKind.CLIENT);
    const traceParent = outboundTraceParent(span, delivery.traceParent);
    const result = await sendDelivery(delivery, { agent: deps.agent, allowPrivate: deps.allowPrivate, timeoutMs: REQUEST_TIMEOUT_MS, ...(traceParent !== undefined ? { traceParent } : {}) });
    endSpan(span, result.kind === "response" && result.status < 300 ? undefined : result.kind === "response" ? `HTTP ${result.status}` : result.kind === "refused" ? result.reason : result.error,
      result.kind === "response" ? { "http.response.status_code": result.status } : undefined);
    if (result.kind === "response") bodyCut = result.bodyCut;
    deps.metrics.requestSeconds.observe(Number(process.hrtime.bigint() - started) / 1e9);
    // A redelivered delivery starts a fresh round of the schedule; its attempts so far stay as history.
    outcome = decideOutcome(result, delivery.roundAttempts, deps.retrySchedule);
  }
  const log = deps.log.child({
    deliveryId: delivery.id,
    webhookId: delivery.webhookId,
    tenantId: delivery.tenantId,
    ...(delivery.taskId !== null ? { taskId: delivery.taskId } : {}),
    attempt: delivery.attempts + 1,
  });
  try {
    const held = await recordDeliveryOutcome(deps.db, delivery, outcome);
    deps.metrics.deliveries.inc({ outcome: held ? outcome.kind : "stale" });
    if (held && outcome.kind === "retry") deps.onRetryScheduled(outcome.delayMs);
    if (!held) log.warn({ outcome: outcome.kind }, "delivery claim expired before its outcome was recorded; outcome dropped");
    else if (outcome.kind === "delivered") log.debug(bodyCut === undefined ? {} : { bodyCut }, "delivered");
    else log.info({ outcome, ...(bodyCut === undefined ? {} : { bodyCut }) }, "delivery not delivered");
  } catch (error) {
    // The lock runs out and the delivery is sent again under the same webhook-id: a duplicate, never a loss.
    deps.metrics.deliveries.inc({ outcome: "unrecorded" });
    log.error({ err: error, outcome: outcome.kind }, "could not record delivery outcome");
  }
}
