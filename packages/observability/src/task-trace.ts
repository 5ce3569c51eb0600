/**
 * One trace per task. The gateway's submit span is the root (or a child of
 * the submitter's own `traceparent`); its W3C traceparent is stored on the
 * task (tasks.trace_parent), and every later step of the task, in whichever
 * process, starts a child span from it: dispatch, each attempt (PUSH request
 * or PULL lease/outcome) and each webhook delivery. With tracing off these
 * helpers return undefined after one boolean check, and a traceparent the
 * submitter sent is still stored and passed on to PUSH endpoints unchanged.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, isSpanContextValid, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import { parseTraceParent } from "@opentelemetry/core";

let active = false;

/** Set by startTracing (tracing.ts); read on hot paths instead of asking the SDK. */
export function setTracingActive(on: boolean): void {
  active = on;
}

export function tracingActive(): boolean {
  return active;
}

export { SpanKind, type Span };

/** Attribute names shared by every task span, so a backend can search them. */
export const TaskAttr = {
  taskId: "tasklane.task_id",
  tenantId: "tasklane.tenant_id",
  queueId: "tasklane.queue_id",
  /** The task's attempt number (tasks.attempts), never a webhook delivery's. */
  attempt: "tasklane.attempt",
  /** A webhook delivery's own attempt number (1 for its first request). */
  deliveryAttempt: "tasklane.delivery.attempt",
  /** On a `task.submit` span whose idempotency key named a task submitted before: no task was created. */
  idempotentRepeat: "tasklane.idempotent_repeat",
  /** "outbox" on a `task.dispatch` span whose post-commit fast path failed: the scheduler's outbox loop delivers the task. */
  dispatchFallback: "tasklane.dispatch.fallback",
  workerId: "tasklane.worker_id",
  deliveryId: "tasklane.delivery_id",
  outcome: "tasklane.outcome",
} as const;

const tracer = () => trace.getTracer("tasklane");

/** A well-formed W3C traceparent (version 00, non-zero ids), else null: what is safe to store and forward. */
export function validTraceParent(value: unknown): string | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== "string" || text.length !== 55) return null;
  const parsed = parseTraceParent(text.toLowerCase());
  if (parsed === null || !isSpanContextValid(parsed)) return null;
  return text.toLowerCase();
}

function parentContext(traceParent: string | null | undefined): Context {
  const parsed = traceParent ? parseTraceParent(traceParent) : null;
  return parsed === null ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, { ...parsed, isRemote: true });
}

/**
 * A span in the task's trace (child of its stored traceparent; a new trace
 * when it has none). Undefined when tracing is off.
 */
export function startTaskSpan(
  name: string,
  traceParent: string | null | undefined,
  attributes: Attributes,
  kind: SpanKind = SpanKind.INTERNAL,
  /** Epoch ms, for a step whose trace context is only known once it is done (a PULL outcome). */
  startTime?: number,
): Span | undefined {
  if (!active) return undefined;
  return tracer().startSpan(name, { kind, attributes, ...(startTime !== undefined ? { startTime } : {}) }, parentContext(traceParent));
}

/** The W3C traceparent naming `span` as the parent. */
export function traceParentOf(span: Span): string {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/**
 * The traceparent an outbound request about a task carries: the current
 * step's span when tracing is on, else the task's stored one (if any).
 */
export function outboundTraceParent(span: Span | undefined, stored: string | null | undefined): string | undefined {
  if (span !== undefined) return traceParentOf(span);
  return stored ?? undefined;
}

/**
 * Ends a span, marking it failed when `error` is given. `endTime` (epoch ms):
 * when the step ended before its outcome was known (a request whose outcome
 * is named once it is recorded).
 */
export function endSpan(span: Span | undefined, error?: unknown, attributes?: Attributes, endTime?: number): void {
  if (span === undefined) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end(endTime);
}

type TracedItem = { taskId: string; tenantId: string; traceParent?: string | null };

function itemSpans(name: string, items: readonly TracedItem[]): Span[] {
  return items.flatMap((i) => {
    const span = i.traceParent ? startTaskSpan(name, i.traceParent, { [TaskAttr.taskId]: i.taskId, [TaskAttr.tenantId]: i.tenantId }, SpanKind.PRODUCER) : undefined;
    return span ? [span] : [];
  });
}

/**
 * Runs `run` inside one span per item that has a trace (dispatch of a batch
 * of tasks to Redis, say). With tracing off, or no traced item, it is just `run()`.
 */
export async function withTaskSpans<T>(
  name: string,
  items: readonly TracedItem[],
  run: () => Promise<T>,
): Promise<T> {
  if (!active) return run();
  const spans = itemSpans(name, items);
  try {
    const result = await run();
    for (const span of spans) endSpan(span);
    return result;
  } catch (error) {
    for (const span of spans) endSpan(span, error);
    throw error;
  }
}

/**
 * withTaskSpans for the post-commit fast path (dispatchAfterCommit), which
 * reports a failure to `onError` instead of throwing because the tasks'
 * outbox rows deliver them anyway. `run` is handed the `onError` to pass on;
 * a failure it reports before it returns ends the spans with ERROR and
 * `tasklane.dispatch.fallback: outbox`. A failure reported later (the outbox
 * rows' deferred delete) only reaches `onError`: the tasks were dispatched.
 */
export async function withFastPathSpans(
  name: string,
  items: readonly TracedItem[],
  run: (onError: (error: unknown) => void) => Promise<void>,
  onError: (error: unknown) => void,
): Promise<void> {
  if (!active) return run(onError);
  const spans = itemSpans(name, items);
  let failure: { error: unknown } | undefined;
  let over = false;
  try {
    await run((error) => {
      if (!over) failure ??= { error };
      onError(error);
    });
  } catch (error) {
    failure ??= { error };
    throw error;
  } finally {
    over = true;
    for (const span of spans) {
      if (failure === undefined) endSpan(span);
      else endSpan(span, failure.error ?? "dispatch failed", { [TaskAttr.dispatchFallback]: "outbox" });
    }
  }
}

/**
 * The trace of a task created without a submit request of its own (a cron
 * run, a workflow's task): a short span that is the root of the task's
 * trace (or a child of `parent`), returned as the traceparent to store.
 * Tracing off: `parent` as it is.
 */
export function newTaskTrace(name: string, parent: string | null, attributes: Attributes): string | null {
  if (!active) return parent;
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parentContext(parent));
  span.end();
  return traceParentOf(span);
}

/** The spans of one submission: one per task, each the root of that task's trace. */
export interface SubmitTrace {
  /** Per input, the traceparent to store on its task (null: none). */
  readonly traceParents: (string | null)[];
  /**
   * Names each span's task and ends them all. `stored`: per input, the
   * traceparent its task holds (tasks.trace_parent). One that is not this
   * span's own means the idempotency key named a task submitted before: the
   * span is marked `tasklane.idempotent_repeat` and linked to that task's
   * trace, so the repeat reads as a request about an existing task, not as
   * the start of a second one.
   */
  finish(taskIds: readonly (string | undefined)[], error?: unknown, stored?: readonly (string | null | undefined)[]): void;
}

/**
 * Starts one submit span per task (children of the submitter's `incoming`
 * traceparent when it sent one, else each its own new trace). `linked`: the
 * trace of a task the new one was made from (replayTask's original), linked
 * from each span rather than continued: a replay is a new task with a trace
 * of its own, as OpenTelemetry links a span to a cause outside its trace.
 * Tracing off: the submitter's traceparent, if any, is stored as it is and
 * no span is made.
 */
export function startSubmitTrace(count: number, tenantId: string, incoming: string | null, linked: string | null = null): SubmitTrace {
  if (!active) {
    return { traceParents: new Array<string | null>(count).fill(incoming), finish: () => undefined };
  }
  const cause = linked === null ? null : parseTraceParent(linked);
  const links = cause === null ? undefined : [{ context: { ...cause, isRemote: true } }];
  const spans = Array.from({ length: count }, () =>
    tracer().startSpan("task.submit", { kind: SpanKind.SERVER, attributes: { [TaskAttr.tenantId]: tenantId }, links }, parentContext(incoming)),
  );
  return {
    traceParents: spans.map(traceParentOf),
    finish(taskIds, error, stored) {
      spans.forEach((span, i) => {
        const id = taskIds[i];
        if (id !== undefined) span.setAttribute(TaskAttr.taskId, id);
        const held = stored?.[i];
        if (held !== undefined && held !== traceParentOf(span)) {
          span.setAttribute(TaskAttr.idempotentRepeat, true);
          const original = held === null ? null : parseTraceParent(held);
          if (original !== null) span.addLink({ context: { ...original, isRemote: true } });
        }
        endSpan(span, error);
      });
    },
  };
}
