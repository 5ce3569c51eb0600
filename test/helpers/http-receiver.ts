import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  at: number;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  json: unknown;
}

export type Responder = (req: ReceivedRequest, res: ServerResponse) => void | Promise<void>;

/**
 * A tenant's HTTP endpoint on 127.0.0.1 (a random port) that records every
 * request and answers with whatever the test's responder decides.
 */
export interface HttpReceiver {
  url: string;
  requests: ReceivedRequest[];
  respond(fn: Responder): void;
  close(): Promise<void>;
}

export async function startReceiver(initial?: Responder): Promise<HttpReceiver> {
  let responder: Responder =
    initial ??
    ((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const received = { at: Date.now(), path: req.url ?? "/", headers: req.headers, body, json };
      requests.push(received);
      void Promise.resolve(responder(received, res)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respond(fn) {
      responder = fn;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
