/**
 * Spans of this test file, read from an in-memory exporter. OpenTelemetry's
 * global provider can be set once per process, and the integration project
 * runs files in shared workers (isolate: false): a file that set it and shut
 * its provider down left the next file's spans going nowhere. So each file
 * unregisters whatever is there before setting its own, and again after.
 */
import { trace } from "@opentelemetry/api";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { setTracingActive } from "@tasklane/observability";
import { afterAll, beforeAll } from "vitest";

export function useInMemoryTracing(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  beforeAll(() => {
    trace.disable();
    trace.setGlobalTracerProvider(provider);
    setTracingActive(true);
  });
  afterAll(async () => {
    setTracingActive(false);
    await provider.shutdown();
    trace.disable();
  });
  return exporter;
}
