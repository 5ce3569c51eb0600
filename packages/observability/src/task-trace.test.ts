import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { afterAll, describe, expect, it } from "vitest";
import { outboundTraceParent, setTracingActive, startSubmitTrace, startTaskSpan, traceParentOf, validTraceParent, withTaskSpans } from "./task-trace.js";

const CLIENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

describe("validTraceParent", () => {
  it("keeps a well-formed W3C traceparent and refuses anything else", () => {
    expect(validTraceParent(CLIENT)).toBe(CLIENT);
    expect(validTraceParent(CLIENT.toUpperCase())).toBe(CLIENT);
    expect(validTraceParent([CLIENT, "x"])).toBe(CLIENT);
    expect(validTraceParent("00-00000000000000000000000000000000-00f067aa0ba902b7-01")).toBeNull();
    expect(validTraceParent("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01")).toBeNull();
    expect(validTraceParent(`${CLIENT}\nlog-injection`)).toBeNull();
    expect(validTraceParent(undefined)).toBeNull();
  });
});

describe("with tracing off", () => {
  it("makes no span, stores and forwards only what the submitter sent", async () => {
    setTracingActive(false);
    expect(startTaskSpan("task.attempt", CLIENT, {})).toBeUndefined();
    expect(startSubmitTrace(2, "ten_1", CLIENT).traceParents).toEqual([CLIENT, CLIENT]);
    expect(startSubmitTrace(1, "ten_1", null).traceParents).toEqual([null]);
    expect(outboundTraceParent(undefined, CLIENT)).toBe(CLIENT);
    expect(outboundTraceParent(undefined, null)).toBeUndefined();
    expect(await withTaskSpans("task.dispatch", [{ taskId: "t", tenantId: "x", traceParent: CLIENT }], async () => 7)).toBe(7);
  });
});

describe("with tracing on", () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  afterAll(async () => {
    setTracingActive(false);
    await provider.shutdown();
    // The global provider is set once per process: give it back for the files after this one.
    trace.disable();
  });

  it("roots a new trace per task, and every later step is its child", async () => {
    setTracingActive(true);
    const submitted = startSubmitTrace(2, "ten_1", null);
    const [first, second] = submitted.traceParents as [string, string];
    expect(first.split("-")[1]).not.toBe(second.split("-")[1]);
    submitted.finish(["task_a", "task_b"]);
    const attempt = startTaskSpan("task.attempt", first, { "tasklane.attempt": 1 });
    expect(attempt).toBeDefined();
    const header = outboundTraceParent(attempt, first) as string;
    expect(header.split("-")[1]).toBe(first.split("-")[1]);
    expect(header).toBe(traceParentOf(attempt!));
    attempt!.end();
    await expect(withTaskSpans("task.dispatch", [{ taskId: "task_a", tenantId: "ten_1", traceParent: first }], async () => {
      throw new Error("redis down");
    })).rejects.toThrow("redis down");
    const spans = exporter.getFinishedSpans();
    const submit = spans.find((s) => s.name === "task.submit" && s.attributes["tasklane.task_id"] === "task_a")!;
    for (const name of ["task.attempt", "task.dispatch"]) {
      const child = spans.find((s) => s.name === name)!;
      expect(child.spanContext().traceId).toBe(submit.spanContext().traceId);
      expect(child.parentSpanContext?.spanId).toBe(submit.spanContext().spanId);
    }
    expect(spans.find((s) => s.name === "task.dispatch")!.status.code).toBe(2);
  });

  it("continues the submitter's trace", () => {
    const submitted = startSubmitTrace(1, "ten_1", CLIENT);
    expect(submitted.traceParents[0]!.split("-")[1]).toBe(CLIENT.split("-")[1]);
    submitted.finish(["task_c"]);
  });
});
