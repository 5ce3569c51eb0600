/**
 * The tenants' HTTP endpoint on 127.0.0.1: PUSH tasks and webhook deliveries
 * land here, and every request becomes a history event: an `effect` when the
 * work was done (answered 2xx), a `request` otherwise. What to answer comes
 * from the task's payload (`mode`) or, for an outage, from `setDown`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { History } from "./history.js";

export type Mode = "ok" | "hang" | "garbage";

export interface EndpointRequest {
  at: number;
  path: string;
  json: Record<string, unknown> | null;
  webhookId?: string;
}

/** Which item and attempt a request belongs to; undefined skips recording. */
export type ItemOf = (req: EndpointRequest) => { item: string; attempt: number } | undefined;

/** PUSH bodies: {taskId, type, payload: {item, mode, delayMs}, attempt}; a task without an item (a schedule's run) is `task:<id>`. */
export const pushItem: ItemOf = (req) => {
  const payload = req.json?.payload as { item?: string } | null | undefined;
  const attempt = req.json?.attempt;
  const taskId = req.json?.taskId;
  if (typeof attempt !== "number") return undefined;
  if (typeof payload?.item === "string") return { item: payload.item, attempt };
  return typeof taskId === "string" ? { item: `task:${taskId}`, attempt } : undefined;
};

export interface Endpoint {
  url: string;
  port: number;
  /** Requests seen, by path prefix. */
  count(pathPrefix?: string): number;
  /** While down, every request is answered 503 (still recorded as a request). */
  setDown(down: boolean): void;
  /** Stops listening (connections refused) until `reopen`. */
  closeListener(): Promise<void>;
  reopen(): Promise<void>;
  close(): Promise<void>;
}

export interface EndpointOptions {
  history: History;
  itemOf?: ItemOf;
  /** Default work time for "ok" requests (keeps attempts in flight when faults hit). */
  delayMs?: number;
}

export async function startEndpoint(opts: EndpointOptions): Promise<Endpoint> {
  const itemOf = opts.itemOf ?? pushItem;
  let down = false;
  const counts = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let json: Record<string, unknown> | null = null;
      try {
        json = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      } catch {
        json = null;
      }
      const header = req.headers["webhook-id"];
      const r: EndpointRequest = { at: Date.now(), path: req.url ?? "/", json, ...(typeof header === "string" ? { webhookId: header } : {}) };
      const top = r.path.split("/")[1] ?? "";
      counts.set(top, (counts.get(top) ?? 0) + 1);
      const who = itemOf(r);
      const key = req.url?.startsWith("/webhook") ? r.webhookId : undefined;
      const refuse = (status: number, body: string) => {
        if (who) opts.history.record({ kind: "request", item: who.item, ...(key !== undefined ? { key } : {}) });
        res.writeHead(status, { "content-type": "text/plain" }).end(body);
      };
      if (down) return refuse(503, "down for maintenance");
      const payload = json?.payload as { mode?: Mode; delayMs?: number } | undefined;
      const mode = payload?.mode ?? "ok";
      if (mode === "hang") {
        // Never answered: the worker's timeout ends the attempt.
        if (who) opts.history.record({ kind: "request", item: who.item });
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      if (mode === "garbage") return refuse(500, `\u0000<<garbage ${Math.random()}>>\u00ff`);
      const delay = payload?.delayMs ?? opts.delayMs ?? 0;
      const answer = () => {
        // The effect counts once the answer is written: the work is done from the endpoint's view.
        if (who) opts.history.record({ kind: "effect", item: who.item, attempt: who.attempt, ...(key !== undefined ? { key } : {}) });
        res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
      };
      if (delay > 0) setTimeout(answer, delay);
      else answer();
    });
  };
  let server: Server = createServer(handle);
  server.keepAliveTimeout = 2_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const shut = async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    count: (prefix) => (prefix === undefined ? [...counts.values()].reduce((a, b) => a + b, 0) : (counts.get(prefix) ?? 0)),
    setDown: (d) => {
      down = d;
    },
    closeListener: shut,
    async reopen() {
      server = createServer(handle);
      server.keepAliveTimeout = 2_000;
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, "127.0.0.1", resolve);
      });
    },
    close: shut,
  };
}
