/**
 * OpenTelemetry tracing for a Tasklane process. Off by default: nothing is
 * loaded, and @opentelemetry/api stays a no-op, so the task helpers in
 * task-trace.ts cost one boolean check. On when an OTLP endpoint is
 * configured (the standard OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); spans go to it as OTLP/HTTP JSON
 * through a BatchSpanProcessor (the standard OTEL_BSP_* variables tune it).
 */
import { setTracingActive } from "./task-trace.js";

export interface TracingOptions {
  /** Whether to start the SDK at all (an OTLP endpoint is configured and OTEL_SDK_DISABLED is not set). */
  enabled: boolean;
  /** `service.name` of every span; OTEL_SERVICE_NAME, when set, wins. */
  serviceName: string;
}

export interface Tracing {
  readonly enabled: boolean;
  /** Exports what is still buffered, then stops; call it before the process exits. */
  shutdown(): Promise<void>;
}

const OFF: Tracing = { enabled: false, shutdown: async () => undefined };

/** Whether the standard OpenTelemetry variables ask for trace export. */
export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  if (["true", "1"].includes((env.OTEL_SDK_DISABLED ?? "").toLowerCase())) return false;
  if ((env.OTEL_TRACES_EXPORTER ?? "").toLowerCase() === "none") return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

/**
 * Starts the SDK and registers it globally (tracer provider, async-hooks
 * context manager, W3C trace-context propagator). The SDK is imported only
 * here, so a process with tracing off never loads it.
 */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (!options.enabled) return OFF;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME || options.serviceName }),
    // The exporter reads its URL and headers from the standard OTEL_EXPORTER_OTLP_* variables.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register();
  setTracingActive(true);
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown() {
      stopping ??= (async () => {
        setTracingActive(false);
        await provider.shutdown();
      })();
      return stopping;
    },
  };
}
