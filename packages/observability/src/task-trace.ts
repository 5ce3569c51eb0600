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
  attempt: "tasklane.attempt",
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

/** Ends a span, marking it failed when `error` is given. */
export function endSpan(span: Span | undefined, error?: unknown, attributes?: Attributes): void {
  if (span === undefined) return;
  if (attributes) span.setAttributes(attributes);
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}

/**
 * Runs `run` inside one span per item that has a trace (dispatch of a batch
 * of tasks to Redis, say). With tracing off, or no traced item, it is just `run()`.
 */
export async function withTaskSpans<T>(
  name: string,
  items: readonly { taskId: string; tenantId: string; traceParent?: string | null }[],
  run: () => Promise<T>,
): Promise<T> {
  if (!active) return run();
  const spans = items.flatMap((i) =>
    i.traceParent ? [startTaskSpan(name, i.traceParent, { [TaskAttr.taskId]: i.taskId, [TaskAttr.tenantId]: i.tenantId }, SpanKind.PRODUCER)] : [],
  );
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
  /** Names each span's task and ends them all. */
  finish(taskIds: readonly (string | undefined)[], error?: unknown): void;
}

/**
 * Starts one submit span per task (children of the submitter's `incoming`
 * traceparent when it sent one, else each its own new trace). Tracing off:
 * the submitter's traceparent, if any, is stored as it is and no span is made.
 */
export function startSubmitTrace(count: number, tenantId: string, incoming: string | null): SubmitTrace {
  if (!active) {
    return { traceParents: new Array<string | null>(count).fill(incoming), finish: () => undefined };
  }
  const spans = Array.from({ length: count }, () =>
    tracer().startSpan("task.submit", { kind: SpanKind.SERVER, attributes: { [TaskAttr.tenantId]: tenantId } }, parentContext(incoming)),
  );
  return {
    traceParents: spans.map(traceParentOf),
    finish(taskIds, error) {
      spans.forEach((span, i) => {
        const id = taskIds[i];
        if (id !== undefined) span.setAttribute(TaskAttr.taskId, id);
        endSpan(span, error);
      });
    },
  };
}
