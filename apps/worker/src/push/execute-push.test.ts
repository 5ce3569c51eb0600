/**
 * executePush against a real HTTP server on 127.0.0.1: how an attempt ends
 * early, by its timeout or by its AttemptAbort (a cancellation).
 */
import { createServer, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { generateSigningSecret } from "@tasklane/core";
import { createOutboundAgent } from "@tasklane/outbound";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AttemptAbort, WORKER_STOPPING } from "./attempt-abort.js";
import { executePush, type PushTarget } from "./execute-push.js";

/** 300 KiB: over the result limit (256 KiB). */
const BIG = "x".repeat(300 * 1024);

/** JSON text escaping an unpaired surrogate, which jsonb refuses. */
const LONE = '{"a":"\\ud800"}';

/** An array nested 20,000 deep (~40 KB, under the result size limit). */
const DEEP = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;

describe("executePush", () => {
  let server: Server;
  let url = "";
  const agent = createOutboundAgent(true, 5_000);
  const requests: string[] = [];

  beforeAll(async () => {
    // "/hang" never answers; "/deep" answers JSON nested 20,000 deep; anything else answers 200 with a JSON result.
    server = createServer((req, res) => {
      requests.push(req.url ?? "");
      if (req.url === "/hang") return;
      if (req.url === "/deep") return res.writeHead(200, { "content-type": "application/json" }).end(DEEP);
      if (req.url === "/big-ok") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ blob: BIG }));
      if (req.url === "/big-503") return res.writeHead(503, { "content-type": "text/html" }).end(`<html>${BIG}</html>`);
      if (req.url === "/switching") return res.writeHead(101).end();
      if (req.url === "/lone") return res.writeHead(200, { "content-type": "application/json" }).end(LONE);
      if (req.url === "/paired") return res.writeHead(200, { "content-type": "application/json" }).end('{"a":"\\uD83D\\ude00","b":"\\\\ud800"}');
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await agent.close();
  });

  const target = (path: string, timeoutSeconds = 30): PushTarget => ({
    taskId: "tsk_1",
    type: "t",
    payload: {},
    attempt: 1,
    leaseGeneration: 1,
    endpointUrl: `${url}${path}`,
    timeoutSeconds,
    signingSecrets: [generateSigningSecret()],
  });

  it("keeps an answer nested deeper than a payload may be as its text (as JSON it could not be stored)", async () => {
    const outcome = await executePush(target("/deep"), agent, true, new AttemptAbort());
    expect(outcome).toEqual({ kind: "succeeded", result: DEEP, status: 200 });
    // The text stores: JSON.stringify of the parsed value overflowed the stack.
    expect(() => JSON.stringify((outcome as { result: unknown }).result)).not.toThrow();
  });

  it("keeps an answer escaping an unpaired surrogate as its text (jsonb refuses it), and JSON with paired ones as JSON", async () => {
    expect(await executePush(target("/lone"), agent, true, new AttemptAbort())).toEqual({ kind: "succeeded", result: LONE, status: 200 });
    expect(await executePush(target("/paired"), agent, true, new AttemptAbort())).toEqual({ kind: "succeeded", result: { a: "😀", b: "\\ud800" }, status: 200 });
  });

  it("succeeds without its result when a 2xx answer is over the result limit: the endpoint did the work", async () => {
    expect(await executePush(target("/big-ok"), agent, true, new AttemptAbort())).toEqual({
      kind: "succeeded",
      result: null,
      status: 200,
      note: "Result not kept: the answer exceeds 262144 bytes (HTTP 200)",
    });
  });

  it("judges a failure over the result limit by its status, quoting the start of its body", async () => {
    const outcome = await executePush(target("/big-503"), agent, true, new AttemptAbort());
    expect(outcome).toMatchObject({ kind: "failed", retryable: true, timedOut: false, status: 503 });
    expect((outcome as { error: string }).error).toBe(`HTTP 503: <html>${"x".repeat(494)}`);
  });

  it("fails permanently, naming the status, when a 1xx ends the request (undici's errors for it, held here)", async () => {
    // Node's own server (101 without an Upgrade header), then raw answers: 101 with one, and a 100 nobody asked for.
    const answers = [
      "HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n",
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    ];
    const raw = createNetServer((socket) => socket.once("data", () => socket.write(answers.shift() ?? "")));
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    const rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
    try {
      const failed = (status: number) => ({ kind: "failed", retryable: false, timedOut: false, status, error: `Endpoint answered ${status}, not a final status` });
      expect(await executePush(target("/switching"), agent, true, new AttemptAbort())).toEqual(failed(101));
      expect(await executePush({ ...target(""), endpointUrl: `${rawUrl}/a` }, agent, true, new AttemptAbort())).toEqual(failed(101));
      expect(await executePush({ ...target(""), endpointUrl: `${rawUrl}/b` }, agent, true, new AttemptAbort())).toEqual(failed(100));
    } finally {
      raw.close();
    }
  });

  it("succeeds with the endpoint's JSON answer", async () => {
    expect(await executePush(target("/ok"), agent, true, new AttemptAbort())).toEqual({ kind: "succeeded", result: { ok: true }, status: 200 });
  });

  it("sends the endpoint's path and query string as they are", async () => {
    const before = requests.length;
    expect(await executePush(target("/hooks/tasks?source=tasklane&v=2"), agent, true, new AttemptAbort())).toMatchObject({ kind: "succeeded" });
    expect(requests.slice(before)).toEqual(["/hooks/tasks?source=tasklane&v=2"]);
  });

  it("fails retryably as timed out when the endpoint outlasts timeoutSeconds", async () => {
    const outcome = await executePush(target("/hang", 1), agent, true, new AttemptAbort());
    expect(outcome).toEqual({ kind: "failed", retryable: true, timedOut: true, error: "Timed out after 1 s" });
  });

  it("is aborted, not failed, when its AttemptAbort fires mid-request", async () => {
    const hangsBefore = requests.filter((r) => r === "/hang").length;
    const abort = new AttemptAbort();
    const pending = executePush(target("/hang"), agent, true, abort);
    while (requests.filter((r) => r === "/hang").length === hangsBefore) await new Promise((r) => setTimeout(r, 10));
    abort.abort(new Error("cancelled"));
    expect(await pending).toEqual({ kind: "aborted" });
  });

  it("is interrupted, neither failed nor cancelled, when the worker stopping cuts it off, before or during the request", async () => {
    const hangsBefore = requests.filter((r) => r === "/hang").length;
    const abort = new AttemptAbort();
    const pending = executePush(target("/hang"), agent, true, abort);
    while (requests.filter((r) => r === "/hang").length === hangsBefore) await new Promise((r) => setTimeout(r, 10));
    abort.abort(WORKER_STOPPING);
    expect(await pending).toEqual({ kind: "interrupted" });
    const before = requests.length;
    const early = new AttemptAbort();
    early.abort(WORKER_STOPPING);
    expect(await executePush(target("/ok"), agent, true, early)).toEqual({ kind: "interrupted" });
    expect(requests.length).toBe(before);
  });

  it("sends nothing for an attempt aborted before it began", async () => {
    const before = requests.length;
    const abort = new AttemptAbort();
    abort.abort(new Error("cancelled"));
    expect(await executePush(target("/ok"), agent, true, abort)).toEqual({ kind: "aborted" });
    expect(requests.length).toBe(before);
  });
});
