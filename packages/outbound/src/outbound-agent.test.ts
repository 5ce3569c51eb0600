import type { LookupAddress } from "node:dns";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { PrivateTargetError, createOutboundAgent, guardedLookup } from "./outbound-agent.js";
import { postText } from "./post-text.js";

/** Taken before any test fakes the timers: the real server and sockets still run on real time. */
const realSetTimeout = globalThis.setTimeout;
const realSleep = (ms: number) => new Promise((resolve) => realSetTimeout(resolve, ms));

/** localhost resolves to loopback through /etc/hosts, so no network is needed. */
function resolve(allowPrivate: boolean, host = "localhost"): Promise<{ error: Error | null; address: string | LookupAddress[] }> {
  return new Promise((done) => {
    guardedLookup(allowPrivate)(host, { all: false }, (error, address) => done({ error, address }));
  });
}

describe("guardedLookup", () => {
  it("refuses a name that resolves to a private address at connect time", async () => {
    const { error } = await resolve(false);
    expect(error).toBeInstanceOf(PrivateTargetError);
  });

  // An address "resolves" to itself without any DNS: these are what the connect-time check sees
  // when a name answers with them. The same classification (core's isPrivateAddress) as at registration.
  it.each(["::7f00:1", "::ffff:0:7f00:1", "64:ff9b:1::7f00:1", "2002:7f00:1::1", "fec0::1", "2001:db8::1", "2001::1", "192.0.2.1", "198.51.100.1", "203.0.113.1"])(
    "refuses an answer of %s at connect time",
    async (address) => {
      const { error } = await resolve(false, address);
      expect(error).toBeInstanceOf(PrivateTargetError);
    },
  );

  it("lets a public answer through", async () => {
    const { error, address } = await resolve(false, "2002:808:808::1");
    expect(error).toBeNull();
    expect(address).toBe("2002:808:808::1");
  });

  it("lets it through when private targets are allowed", async () => {
    const { error, address } = await resolve(true);
    expect(error).toBeNull();
    expect(typeof address).toBe("string");
  });
});

describe("createOutboundAgent", () => {
  it("leaves a request's time to its caller's signal: undici's own 300 s headers and body timeouts are off", async () => {
    // A PUSH attempt may run for up to a day (its task's timeoutSeconds); undici's defaults would
    // end one that waits over 300 s for its answer's headers, or between two pieces of its body, as
    // a network error. This file makes no other request, so undici's timer tick starts on the
    // fake clock below and 400 s pass in a moment.
    const seen = new Set<string>();
    const server = createServer((req, res) => {
      seen.add(req.url ?? "");
      if (req.url === "/headers-then-nothing") res.flushHeaders();
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const agent = createOutboundAgent(true, 5_000);
    try {
      const send = (path: string, signal: AbortSignal) => {
        const outcome = { settled: false, error: undefined as unknown };
        const pending = postText(agent, new URL(`${base}${path}`), { headers: {}, body: "{}", signal, limit: 1024, overLimit: "fail" }).then(
          () => void (outcome.settled = true),
          (error: unknown) => void Object.assign(outcome, { settled: true, error }),
        );
        return { outcome, pending };
      };
      const silent = new AbortController();
      const slowBody = new AbortController();
      const waitingForHeaders = send("/silent", silent.signal);
      const waitingForBody = send("/headers-then-nothing", slowBody.signal);
      for (let i = 0; i < 500 && seen.size < 2; i++) await realSleep(10);
      await realSleep(100); // the headers reach the client, which then waits for the body
      await vi.advanceTimersByTimeAsync(400_000);
      expect(waitingForHeaders.outcome).toEqual({ settled: false, error: undefined });
      expect(waitingForBody.outcome).toEqual({ settled: false, error: undefined });

      silent.abort(new Error("attempt timed out"));
      slowBody.abort(new Error("attempt timed out"));
      await Promise.all([waitingForHeaders.pending, waitingForBody.pending]);
      expect(waitingForHeaders.outcome.error).toMatchObject({ name: "AbortError", reason: new Error("attempt timed out") });
      expect(waitingForBody.outcome.error).toMatchObject({ name: "AbortError", reason: new Error("attempt timed out") });
    } finally {
      vi.useRealTimers();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await agent.close();
    }
  });
});
