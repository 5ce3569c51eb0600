/**
 * The operations endpoint of every background app (scheduler, worker,
 * notifier) on METRICS_PORT. The gateway serves the same paths on its own
 * Express app, next to GraphQL.
 *
 *   GET /metrics  Prometheus text of the app's registry (no credential: scrape from inside the cluster).
 *   GET /healthz  liveness: 200 while the event loop answers. Dependencies are
 *   GET /livez    deliberately not checked: restarting a process does not bring Postgres back.
 *   GET /readyz   readiness: 200 when the app's dependencies answer, 503 naming what is down,
 *                 503 "draining" once shutdown has begun.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Registry } from "prom-client";
import type { Readiness } from "./readiness.js";

export interface OpsServerOptions {
  port: number;
  /** METRICS_HOST. Default: every interface, so a kubelet or Prometheus on the pod IP can reach it. */
  host?: string | undefined;
  registry: Registry;
  ready: () => Promise<Readiness>;
}

export interface OpsServer {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /** From now on /readyz answers 503 "draining"; /metrics and liveness keep answering. */
  markDraining(): void;
  close(): Promise<void>;
}

type Answer = (status: number, contentType: string, body: string) => void;

const JSON_TYPE = "application/json";

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  let draining = false;

  const readiness = async (answer: Answer) => {
    if (draining) return answer(503, JSON_TYPE, JSON.stringify({ status: "draining" }));
    const report = await options.ready();
    answer(report.ready ? 200 : 503, JSON_TYPE, JSON.stringify({ status: report.ready ? "ready" : "unavailable", ...report.dependencies }));
  };

  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const answer: Answer = (status, contentType, body) => {
      res.writeHead(status, { "content-type": contentType, "cache-control": "no-store" });
      res.end(body);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return answer(405, "text/plain", "method not allowed\n");
    switch (path) {
      case "/metrics":
        options.registry.metrics().then(
          (text) => answer(200, options.registry.contentType, text),
          () => answer(500, "text/plain", "metrics unavailable\n"),
        );
        return;
      case "/healthz":
      case "/livez":
        return answer(200, JSON_TYPE, JSON.stringify({ status: "ok" }));
      case "/readyz":
        readiness(answer).catch(() => answer(503, JSON_TYPE, JSON.stringify({ status: "unavailable" })));
        return;
      default:
        return answer(404, "text/plain", "not found\n");
    }
  });
  // Scrapes and probes are tiny; a short keep-alive lets close() finish promptly.
  server.keepAliveTimeout = 1_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    const onListening = () => {
      server.off("error", reject);
      resolve();
    };
    if (options.host === undefined) server.listen(options.port, onListening);
    else server.listen(options.port, options.host, onListening);
  });

  return {
    port: (server.address() as AddressInfo).port,
    markDraining() {
      draining = true;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
