import { EventEmitter } from "node:events";
import { afterEach, describe, expect, it } from "vitest";
import type { Authenticator } from "../auth/authenticate.js";
import { ANONYMOUS, OPERATOR, type Principal } from "../auth/principal.js";
import { createLogger } from "../observability/logger.js";
import { SocketCredentials } from "./socket-credentials.js";

/** A socket as `ws` presents it to the watch: a ready state, close(), and its close event. */
class FakeSocket extends EventEmitter {
  readyState = 1;
  closedWith: [number, string] | null = null;
  close(code: number, reason: string): void {
    this.closedWith = [code, reason];
    this.readyState = 3;
    this.emit("close");
  }
}

describe("SocketCredentials", () => {
  const live = new Set<string>(["Bearer good"]);
  const asked: unknown[] = [];
  let failing = false;
  const authenticator: Authenticator = {
    async principalFor(authorization): Promise<Principal> {
      asked.push(authorization);
      if (failing) throw new Error("connect ECONNREFUSED 127.0.0.1:5432");
      return typeof authorization === "string" && live.has(authorization) ? OPERATOR : ANONYMOUS;
    },
  };
  // An hour apart: every sweep here is called by the test.
  const watch = new SocketCredentials({ authenticator, closeCode: 4401, closeReason: "Unauthorized", intervalMs: 3_600_000, log: createLogger("silent") });
  afterEach(() => {
    asked.length = 0;
    failing = false;
  });

  it("closes the sockets whose credential stopped working, with the code given, and keeps the others", async () => {
    const kept = new FakeSocket();
    const revoked = new FakeSocket();
    watch.watch(kept, "Bearer good");
    live.add("Bearer soon-revoked");
    watch.watch(revoked, "Bearer soon-revoked");
    await watch.sweep();
    expect([kept.closedWith, revoked.closedWith]).toEqual([null, null]);

    live.delete("Bearer soon-revoked");
    await watch.sweep();
    expect(revoked.closedWith).toEqual([4401, "Unauthorized"]);
    expect(kept.closedWith).toBeNull();

    // A closed socket leaves the watch: the next sweep asks about the kept one only.
    asked.length = 0;
    await watch.sweep();
    expect(asked).toEqual(["Bearer good"]);
    kept.close(1000, "bye");
  });

  it("watches no socket that closed before it was handed over, and forgets one once it closes", async () => {
    const early = new FakeSocket();
    early.readyState = 3;
    watch.watch(early, "Bearer good");
    const later = new FakeSocket();
    watch.watch(later, "Bearer good");
    later.close(1000, "bye");
    await watch.sweep();
    expect(asked).toEqual([]);
  });

  it("keeps a socket while its credential cannot be checked (Postgres down), and closes it once it can and fails", async () => {
    const socket = new FakeSocket();
    watch.watch(socket, "Bearer gone");
    failing = true;
    await watch.sweep();
    expect(socket.closedWith).toBeNull();
    failing = false;
    await watch.sweep();
    expect(socket.closedWith).toEqual([4401, "Unauthorized"]);
  });

  it("runs one sweep at a time", async () => {
    const socket = new FakeSocket();
    watch.watch(socket, "Bearer good");
    await Promise.all([watch.sweep(), watch.sweep()]);
    expect(asked).toEqual(["Bearer good"]);
    socket.close(1000, "bye");
    watch.stop();
  });
});
