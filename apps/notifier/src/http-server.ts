import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

/**
 * GET /metrics (Prometheus text, no credential, as the contract says) and
 * GET /healthz (200 when Postgres answers, 503 otherwise). Nothing else.
 */
export function startOpsServer(port: number, registry: Registry, healthy: () => Promise<boolean>): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const answer = (status: number, type: string, body: string) => {
      res.writeHead(status, { "content-type": type });
      res.end(body);
    };
    if (req.method !== "GET") return answer(405, "text/plain", "method not allowed\n");
    if (path === "/metrics") {
      registry.metrics().then(
        (text) => answer(200, registry.contentType, text),
        () => answer(500, "text/plain", "metrics unavailable\n"),
      );
      return;
    }
    if (path === "/healthz") {
      healthy().then(
        (ok) => answer(ok ? 200 : 503, "application/json", JSON.stringify({ ok })),
        () => answer(503, "application/json", JSON.stringify({ ok: false })),
      );
      return;
    }
    answer(404, "text/plain", "not found\n");
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, () => resolve(server));
  });
}
