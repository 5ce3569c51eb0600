/**
 * A tiny HTTP server on 127.0.0.1 answering canned GraphQL responses, for the
 * SDK's unit tests. The real gateway is outside the SDK's unit; its behaviour
 * is covered by test/integration/sdk-*.test.ts.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeRequest {
  /** The operation name of the document, e.g. "SubmitTask". */
  operationName: string;
  query: string;
  variables: Record<string, unknown>;
  headers: IncomingHttpHeaders;
  /** The request target: path and query string. */
  path: string;
  /** Aborted when the client goes away (e.g. an aborted long poll). */
  signal: AbortSignal;
}

export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent verbatim instead of `body`. */
  raw?: string;
  delayMs?: number;
  /** Destroy the socket instead of answering (a reset connection). */
  destroy?: boolean;
}

export type FakeResponder = (req: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeGateway {
  url: string;
  requests: FakeRequest[];
  /** Requests of one operation, in arrival order. */
  calls(operationName: string): FakeRequest[];
  close(): Promise<void>;
}

export const ok = (data: Record<string, unknown>): FakeReply => ({ body: { data } });

export const gqlError = (code: string, message: string, extensions: Record<string, unknown> = {}, status = 200): FakeReply => ({
  status,
  body: { errors: [{ message, extensions: { code, ...extensions } }], data: null },
});

function operationNameOf(query: string): string {
  return /^\s*(?:query|mutation)\s+([A-Za-z_][A-Za-z0-9_]*)/.exec(query)?.[1] ?? "anonymous";
}

export async function startFakeGateway(responder: FakeResponder): Promise<FakeGateway> {
  const requests: FakeRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        const parsed = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { query: string; variables?: Record<string, unknown> };
        const request: FakeRequest = {
          operationName: operationNameOf(parsed.query),
          query: parsed.query,
          variables: parsed.variables ?? {},
          headers: req.headers,
          path: req.url ?? "",
          signal: gone.signal,
        };
        requests.push(request);
        const reply = await responder(request);
        if (reply.delayMs) await new Promise((r) => setTimeout(r, reply.delayMs));
        if (res.destroyed) return;
        if (reply.destroy) {
          req.socket.destroy();
          return;
        }
        const text = reply.raw ?? JSON.stringify(reply.body ?? { data: null });
        res.writeHead(reply.status ?? 200, { "content-type": "application/json", ...reply.headers }).end(text);
      })().catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    requests,
    calls: (name) => requests.filter((r) => r.operationName === name),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
