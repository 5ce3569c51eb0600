import type { ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { useInMemoryTracing } from "../helpers/in-memory-tracing.js";
import { asTenant, createTenant, type CreatedTenant } from "../helpers/platform.js";

/**
 * replayTask's trace, with the gateway in process and spans read from an
 * in-memory exporter: the replay is a new task with a trace of its own,
 * made as submitTask's is (a child of the caller's traceparent when it sends
 * one, else a new trace), and its submit span links to the original's trace
 * (OpenTelemetry's way to name a cause outside the trace): the original's
 * trace is not continued, and the replay's attempts never appear in it.
 */
const exporter = useInMemoryTracing();
const platform = useGateway();
const CALLER_TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID = "00f067aa0ba902b7";

const submitSpan = (taskId: string): ReadableSpan => {
  const spans = exporter.getFinishedSpans().filter((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === taskId);
  expect(spans).toHaveLength(1);
  return spans[0]!;
};

async function finishedTask(t: CreatedTenant): Promise<string> {
  const call = asTenant(platform.gateway, t);
  const { submitTask } = await call<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "traced" }) { id } }`);
  const { leaseTasks } = await call<{ leaseTasks: { leaseToken: string }[] }>(`mutation { leaseTasks(queue: "default", workerId: "w", max: 1) { leaseToken } }`);
  await call(`mutation ($id: ID!, $tok: String!) { completeTask(taskId: $id, leaseToken: $tok, result: {ok: true}) { status } }`, { id: submitTask.id, tok: leaseTasks[0]!.leaseToken });
  return submitTask.id;
}

async function replay(t: CreatedTenant, id: string, traceparent?: string): Promise<string> {
  const res = await fetch(platform.gateway.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${t.apiKey}`, ...(traceparent ? { traceparent } : {}) },
    body: JSON.stringify({ query: `mutation ($id: ID!) { replayTask(id: $id) { id } }`, variables: { id } }),
  });
  const body = (await res.json()) as { data?: { replayTask: { id: string } }; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data!.replayTask.id;
}

const storedTraceParent = async (id: string) =>
  (await platform.database.db.pool.query<{ trace_parent: string | null }>("SELECT trace_parent FROM tasks WHERE id = $1", [id])).rows[0]?.trace_parent;

describe("replayTask's trace", () => {
  it("is a new trace linked to the original's, or the caller's own trace when it sends a traceparent, as for submitTask", async () => {
    const t = await createTenant(platform.gateway);
    const original = await finishedTask(t);
    const originalSpan = submitSpan(original).spanContext();

    const replayed = await replay(t, original);
    const span = submitSpan(replayed);
    expect(span.spanContext().traceId).not.toBe(originalSpan.traceId);
    expect(span.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[originalSpan.traceId, originalSpan.spanId]]);
    // The replay's own steps continue its own trace.
    expect(await storedTraceParent(replayed)).toBe(`00-${span.spanContext().traceId}-${span.spanContext().spanId}-01`);

    const underCaller = await replay(t, original, `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`);
    const callerSpan = submitSpan(underCaller);
    expect(callerSpan.spanContext().traceId).toBe(CALLER_TRACE_ID);
    expect(callerSpan.parentSpanContext?.spanId).toBe(CALLER_SPAN_ID);
    expect(callerSpan.links.map((l) => l.context.spanId)).toEqual([originalSpan.spanId]);
  });
});
