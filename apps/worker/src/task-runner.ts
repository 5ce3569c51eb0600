import { setTimeout as sleep } from "node:timers/promises";
import { assertNever, decideAfterFailure, type BackoffPolicy } from "@tasklane/core";
import { failAttempt, returnInterruptedAttempts, type PushTaskRecord, type StartedAttempt } from "@tasklane/db";
import { SpanKind, TaskAttr, endSpan, outboundTraceParent, startTaskSpan, withFastPathSpans, type Span } from "@tasklane/observability";
import { dispatchAfterCommit } from "@tasklane/queue";
import type { WorkerContext } from "./context.js";
import { failureOutcome, type AttemptOutcomeLabel } from "./metrics.js";
import type { AttemptAbort } from "./push/attempt-abort.js";
import { leaseEndsAt } from "./outcome-retry.js";
import { executePush, type PushOutcome } from "./push/execute-push.js";

/**
 * Runs one started attempt to its recorded outcome, calling `executed` as
 * soon as the request is over (its concurrency slot is free from then on,
 * while the outcome is being recorded). Every write names the
 * lease generation it was started under; a refusal means the task moved on
 * (cancelled, lease expired and re-leased) and this attempt's outcome is void.
 * `abort` is the attempt's: a cancellation aborts it.
 */
export async function runAttempt(ctx: WorkerContext, started: StartedAttempt<PushTaskRecord>, abort: AttemptAbort, executed: () => void): Promise<void> {
  const { task } = started;
  // Read now, while this is just after the start statement's answer: an outcome Postgres cannot take is worth holding until then.
  const leaseEnds = leaseEndsAt(started, performance.now());
  const info = ctx.directory.get(task.queueId);
  if (!info) {
    // The queue was switched to PULL or deleted after dispatch: hand the task back.
    executed();
    await recordFailure(ctx, started, { retryable: true, error: "Queue is no longer a PUSH queue", timedOut: false }, leaseEnds);
    return;
  }
  // Started ahead of its runAt (WORKER_START_AHEAD_MS): sent at runAt by the database's clock, no
  // sooner, and not later by how long the answer took to get here. A cancellation meanwhile ends it
  // in executePush, which sends nothing for an attempt already aborted.
  if (started.startInMs > 0) await ctx.serverClock.waitUntil(task.runAt.getTime(), (ms) => sleep(ms).then(() => true));
  // A signing-secret rotation announced while this attempt was started or held is loaded before it signs.
  const reloading = ctx.directory.whenCurrent();
  if (reloading !== undefined) await reloading;
  const signingSecrets = (ctx.directory.get(task.queueId) ?? info).signingSecrets;
  const startedAt = Date.now();
  // One span per attempt in the task's trace; the endpoint gets it as its parent (traceparent header).
  const span = startTaskSpan("task.attempt", task.traceParent, {
    [TaskAttr.taskId]: task.id,
    [TaskAttr.tenantId]: task.tenantId,
    [TaskAttr.attempt]: task.attempts,
    [TaskAttr.workerId]: ctx.workerId,
  }, SpanKind.CLIENT);
  const traceParent = outboundTraceParent(span, task.traceParent);
  const outcome = await executePush(
    {
      taskId: task.id,
      type: task.type,
      payload: task.payload,
      attempt: task.attempts,
      leaseGeneration: task.leaseGeneration,
      ...(started.parents !== undefined ? { parents: started.parents } : {}),
      endpointUrl: info.endpointUrl,
      timeoutSeconds: task.timeoutSeconds,
      signingSecrets,
      ...(traceParent !== undefined ? { traceParent } : {}),
    },
    ctx.agent,
    ctx.env.ALLOW_PRIVATE_TARGETS,
    abort,
  );
  executed();
  const endedAt = Date.now();
  ctx.metrics.execution.observe((endedAt - startedAt) / 1000);
  let label: AttemptOutcomeLabel | undefined;
  try {
    label = await recordOutcome(ctx, started, outcome, startedAt, leaseEnds);
  } finally {
    endAttemptSpan(span, outcome, label, endedAt);
  }
}

/**
 * The attempt span ends where the request did, named with the label the
 * outcome metric counted (tasklane_task_outcomes_total), so a span and the
 * metric never call one attempt two things; without a label (recording
 * failed) it keeps the request's own outcome.
 */
function endAttemptSpan(span: Span | undefined, outcome: PushOutcome, label: AttemptOutcomeLabel | undefined, endedAt: number): void {
  if (span === undefined) return;
  const status = "status" in outcome && outcome.status !== undefined ? { "http.response.status_code": outcome.status } : {};
  endSpan(span, outcome.kind === "failed" ? outcome.error : undefined, { [TaskAttr.outcome]: label ?? outcome.kind, ...status }, endedAt);
}

/** Records what the request ended as; answers the label counted in the outcome metric. */
async function recordOutcome(
  ctx: WorkerContext,
  started: StartedAttempt<PushTaskRecord>,
  outcome: PushOutcome,
  startedAt: number,
  leaseEnds: number,
): Promise<AttemptOutcomeLabel> {
  const { task } = started;
  // Built only when a line is written: a pino child per task is a measurable cost at thousands of tasks/s.
  const log = () => ctx.log.child({ taskId: task.id, tenantId: task.tenantId, queueId: task.queueId, attempt: task.attempts });
  switch (outcome.kind) {
    case "succeeded": {
      const completion = { taskId: task.id, leaseGeneration: task.leaseGeneration, workflowId: task.workflowId };
      const { note } = outcome;
      const accepted =
        note === undefined
          ? await ctx.completions.complete({ ...completion, result: outcome.result }, leaseEnds)
          : await ctx.completions.whileLeaseLasts(task.id, leaseEnds, () => ctx.completions.completeWithoutResult(completion, note));
      const label = accepted ? "succeeded" : "stale";
      ctx.metrics.outcomes.inc({ outcome: label });
      if (ctx.log.isLevelEnabled("debug")) log().debug({ ms: Date.now() - startedAt, accepted }, "attempt succeeded");
      return label;
    }
    case "failed":
      log().info({ error: outcome.error, retryable: outcome.retryable }, "attempt failed");
      return recordFailure(ctx, started, outcome, leaseEnds);
    case "aborted":
      // Cancelled: the cancel transition already recorded the final state.
      ctx.metrics.outcomes.inc({ outcome: "cancelled" });
      log().info("attempt aborted by cancellation");
      return "cancelled";
    case "interrupted": {
      const { returned, dispatch } = await ctx.completions.whileLeaseLasts(task.id, leaseEnds, () =>
        returnInterruptedAttempts(ctx.db, [{ taskId: task.id, leaseGeneration: task.leaseGeneration }], `worker:${ctx.workerId}`, ctx.horizonMs),
      );
      const label = returned.length > 0 ? "handed_back" : "stale";
      ctx.metrics.outcomes.inc({ outcome: label });
      log().info({ handedBack: returned.length > 0 }, "attempt cut off by the worker stopping; handed back uncharged");
      await dispatchAfterCommit(ctx.db, ctx.dispatcher, dispatch, (error) => ctx.log.warn({ err: error, taskId: task.id }, "fast dispatch failed; outbox will retry"));
      return label;
    }
    default:
      return assertNever(outcome);
  }
}

async function recordFailure(
  ctx: WorkerContext,
  { task }: StartedAttempt<PushTaskRecord>,
  failure: { retryable: boolean; error: string; timedOut: boolean; retryAfterSeconds?: number },
  leaseEnds: number,
): Promise<AttemptOutcomeLabel> {
  const backoff: BackoffPolicy = {
    strategy: task.backoffStrategy,
    delaySeconds: task.backoffDelaySeconds,
    maxDelaySeconds: task.backoffMaxDelaySeconds,
    jitter: task.backoffJitter,
  };
  const decision = decideAfterFailure({
    attempt: task.attempts,
    maxAttempts: task.maxAttempts,
    retryable: failure.retryable,
    backoff,
    retryAfterSeconds: failure.retryAfterSeconds,
  });
  // Held like a success while Postgres cannot be reached: the decision (retry delay, DEAD) stands.
  const result = await ctx.completions.whileLeaseLasts(task.id, leaseEnds, () =>
    failAttempt(
      ctx.db,
      { taskId: task.id, leaseGeneration: task.leaseGeneration, error: failure.error, outcome: failure.timedOut ? "TIMED_OUT" : "FAILED", decision },
      `worker:${ctx.workerId}`,
      ctx.horizonMs,
    ),
  );
  const label = failureOutcome(decision, failure.timedOut, result.accepted.length > 0);
  ctx.metrics.outcomes.inc({ outcome: label });
  if (label === "failed" || label === "timed_out") ctx.metrics.retries.inc();
  await withFastPathSpans(
    "task.dispatch",
    result.dispatch,
    (onError) => dispatchAfterCommit(ctx.db, ctx.dispatcher, result.dispatch, onError),
    (error) => ctx.log.warn({ err: error, taskId: task.id }, "fast dispatch failed; outbox will retry"),
  );
  return label;
}
