/** postText against a real HTTP server on 127.0.0.1. */
import { EventEmitter } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOutboundAgent } from "./outbound-agent.js";
import { BodyTooLargeError, postText, type PostTextOptions } from "./post-text.js";

describe("postText", () => {
  let server: Server;
  let base = "";
  const agent = createOutboundAgent(true, 5_000);
  /** Per path: what the server saw. */
  const seen = new Map<string, { body: string; closedEarly: boolean; bytesSent: number }>();

  const routes: Record<string, (req: IncomingMessage, res: ServerResponse, record: { bytesSent: number }) => void> = {
    "/echo": (req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        res.writeHead(201, { "content-type": "text/plain", "retry-after": "7" });
        // Two writes: the answer arrives in more than one piece.
        res.write(`got ${req.headers["x-test"]}:`);
        res.end(body);
      });
    },
    "/endless": (_req, res, record) => {
      res.writeHead(200);
      const kb = Buffer.alloc(1024, 0x61);
      const pump = (): void => {
        while (!res.destroyed && record.bytesSent < 16 * 1024 * 1024) {
          record.bytesSent += kb.length;
          if (!res.write(kb)) return void res.once("drain", pump);
        }
        res.end();
      };
      pump();
    },
    "/hang": () => undefined,
    // 200 at once, then a byte a second: a body slower than any grace.
    "/trickle": (req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "text/plain" });
      res.write(".");
      const timer = setInterval(() => res.write("."), 1000);
      res.on("close", () => clearInterval(timer));
    },
    // Promises 100 bytes, sends 7, then drops the connection.
    "/cut": (req, res) => {
      req.resume();
      res.writeHead(200, { "content-length": "100" });
      res.write("partial");
      setTimeout(() => req.socket.destroy(), 50);
    },
    "/cut-503": (req, res) => {
      req.resume();
      res.writeHead(503, { "content-length": "100" });
      res.write("down fo");
      setTimeout(() => req.socket.destroy(), 50);
    },
  };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = req.url ?? "";
      const record = { body: "", closedEarly: false, bytesSent: 0 };
      seen.set(path, record);
      res.on("close", () => (record.closedEarly = !res.writableFinished));
      routes[path]?.(req, res, record);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await agent.close();
  });

  const options = (over: Partial<PostTextOptions> = {}): PostTextOptions => ({
    headers: { "content-type": "text/plain", "x-test": "yes" },
    body: "hello",
    signal: new AbortController().signal,
    limit: 1024,
    overLimit: "fail",
    ...over,
  });
  const until = async (done: () => boolean): Promise<void> => {
    for (let i = 0; i < 500 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  };

  it("answers the status, the headers and the whole body", async () => {
    const res = await postText(agent, new URL(`${base}/echo`), options());
    expect(res.statusCode).toBe(201);
    expect(res.headers["retry-after"]).toBe("7");
    expect(res.text).toBe("got yes:hello");
    expect(res.truncated).toBe(false);
  });

  it("keeps the first `limit` bytes of a longer body and closes the connection", async () => {
    const res = await postText(agent, new URL(`${base}/endless`), options({ limit: 4000, overLimit: "truncate" }));
    expect(res.text).toBe("a".repeat(4000));
    expect(res.truncated).toBe(true);
    await until(() => seen.get("/endless")?.closedEarly === true);
    const record = seen.get("/endless")!;
    expect(record.closedEarly).toBe(true);
    expect(record.bytesSent).toBeLessThan(16 * 1024 * 1024);
  });

  it("refuses a body over `limit` when it must be whole", async () => {
    await expect(postText(agent, new URL(`${base}/endless`), options({ limit: 4000, overLimit: "fail" }))).rejects.toBeInstanceOf(BodyTooLargeError);
  });

  it("ends the request when its AbortSignal fires, with the signal's reason", async () => {
    const controller = new AbortController();
    const pending = postText(agent, new URL(`${base}/hang`), options({ signal: controller.signal }));
    await until(() => seen.has("/hang"));
    controller.abort(new Error("enough"));
    await expect(pending).rejects.toMatchObject({ name: "AbortError", reason: new Error("enough") });
    await until(() => seen.get("/hang")?.closedEarly === true);
    expect(seen.get("/hang")?.closedEarly).toBe(true);
  });

  it("takes an EventEmitter with `aborted` and `reason` as its signal", async () => {
    seen.delete("/hang");
    const abort = Object.assign(new EventEmitter(), { aborted: false, reason: undefined as unknown });
    const pending = postText(agent, new URL(`${base}/hang`), options({ signal: abort }));
    await until(() => seen.has("/hang"));
    abort.aborted = true;
    abort.reason = "cancelled";
    abort.emit("abort");
    await expect(pending).rejects.toMatchObject({ name: "AbortError", reason: "cancelled" });
    expect(abort.listenerCount("abort")).toBe(0);
  });

  it("sends nothing when the signal has already fired", async () => {
    seen.delete("/echo");
    const signal = AbortSignal.abort(new Error("too late"));
    await expect(postText(agent, new URL(`${base}/echo`), options({ signal }))).rejects.toMatchObject({ name: "AbortError" });
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.has("/echo")).toBe(false);
  });

  describe("with bodyGraceMs: the status is the answer", () => {
    it("answers a 2xx whose body outlasts the grace with the status and what arrived, closing the connection", async () => {
      const started = Date.now();
      const res = await postText(agent, new URL(`${base}/trickle`), options({ bodyGraceMs: 300 }));
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(res).toMatchObject({ statusCode: 200, text: ".", truncated: false, bodyCut: "body not finished within 300 ms" });
      await until(() => seen.get("/trickle")?.closedEarly === true);
      expect(seen.get("/trickle")?.closedEarly).toBe(true);
    });

    it("answers a 2xx whose connection closes mid-body with the status and what arrived", async () => {
      const res = await postText(agent, new URL(`${base}/cut`), options({ bodyGraceMs: 5_000 }));
      expect(res).toMatchObject({ statusCode: 200, text: "partial", truncated: false });
      expect(res.bodyCut).toMatch(/other side closed/);
    });

    it("answers any final status so, a 503 included", async () => {
      const res = await postText(agent, new URL(`${base}/cut-503`), options({ bodyGraceMs: 5_000 }));
      expect(res).toMatchObject({ statusCode: 503, text: "down fo" });
    });

    it("answers with the status when the signal fires during the body", async () => {
      const controller = new AbortController();
      const pending = postText(agent, new URL(`${base}/trickle`), options({ signal: controller.signal, bodyGraceMs: 5_000 }));
      await until(() => seen.has("/trickle"));
      await new Promise((r) => setTimeout(r, 100));
      controller.abort(new Error("enough"));
      expect(await pending).toMatchObject({ statusCode: 200, bodyCut: "request aborted" });
    });

    it("still rejects when no status came", async () => {
      seen.delete("/hang");
      const controller = new AbortController();
      const pending = postText(agent, new URL(`${base}/hang`), options({ signal: controller.signal, bodyGraceMs: 100 }));
      await until(() => seen.has("/hang"));
      await new Promise((r) => setTimeout(r, 200));
      controller.abort(new Error("enough"));
      await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    });

    it("leaves a body that ends in time whole, without bodyCut", async () => {
      const res = await postText(agent, new URL(`${base}/echo`), options({ bodyGraceMs: 1_000 }));
      expect(res).toEqual({ statusCode: 201, headers: expect.anything(), text: "got yes:hello", truncated: false });
    });
  });

  it("without bodyGraceMs, a connection closed mid-body rejects (the PUSH worker needs the whole result)", async () => {
    await expect(postText(agent, new URL(`${base}/cut`), options())).rejects.toThrow(/other side closed/);
  });

  it("answers the final status after an informational 1xx (RFC 9110 15.2)", async () => {
    // Raw TCP: node's http server cannot send an unsolicited 103 before its answer.
    const raw = createTcpServer((socket) => {
      socket.once("data", () => socket.end("HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"));
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => raw.listen(0, "127.0.0.1", resolve));
    try {
      const res = await postText(agent, new URL(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/x`), options());
      expect(res).toMatchObject({ statusCode: 200, text: "ok" });
    } finally {
      await new Promise((resolve) => raw.close(resolve));
    }
  });

  it("lets go of its signal once the answer is in", async () => {
    const abort = Object.assign(new EventEmitter(), { aborted: false, reason: undefined as unknown });
    await postText(agent, new URL(`${base}/echo`), options({ signal: abort }));
    expect(abort.listenerCount("abort")).toBe(0);
  });
});
