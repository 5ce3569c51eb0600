import { describe, expect, it } from "vitest";
import type { Principal } from "../auth/principal.js";
import { TenantGate } from "./tenant-concurrency.js";
import { TenantOperations, leaveSlot, outsideSlot } from "./tenant-operations.js";

const tenant = (tenantId: string): Principal => ({ kind: "tenant", tenantId, apiKeyId: "key", scopes: [] });

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const refusedCode = (error: { extensions: Record<string, unknown> }) => `refused ${String(error.extensions.code)} ${String(error.extensions.retryAfterSeconds)}`;

describe("TenantOperations", () => {

  it("gives the slot up for the rest of the operation on leaveSlot, once, even around a later sleep", async () => {
    const gate = new TenantGate({ share: 1 });
    const ops = new TenantOperations(gate);
    const hold = deferred();
    const first = ops.run(
      tenant("a"),
      async () => {
        leaveSlot();
        leaveSlot();
        await outsideSlot(() => hold.promise);
        return gate.load("a");
      },
      refusedCode,
    );
    // The first operation still runs, and the tenant's one slot is free for another.
    expect(await ops.run(tenant("a"), async () => gate.load("a"), refusedCode)).toEqual({ running: 1, waiting: 0 });
    hold.resolve();
    expect(await first).toEqual({ running: 0, waiting: 0 });
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });
  it("holds a slot for the operation and gives it back when it ends, even when it throws", async () => {
    const gate = new TenantGate({ share: 1 });
    const ops = new TenantOperations(gate);
    const during = await ops.run(tenant("a"), async () => gate.load("a"), refusedCode);
    expect(during).toEqual({ running: 1, waiting: 0 });
    await expect(ops.run(tenant("a"), async () => Promise.reject(new Error("boom")), refusedCode)).rejects.toThrow("boom");
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });

  it("answers RATE_LIMITED with retryAfterSeconds through `refused` when the tenant's queue is full, having run nothing", async () => {
    const gate = new TenantGate({ share: 1, maxWaiting: 0 });
    const ops = new TenantOperations(gate);
    const hold = deferred();
    const first = ops.run(tenant("a"), () => hold.promise.then(() => "first"), refusedCode);
    let ran = false;
    expect(await ops.run(tenant("a"), async () => ((ran = true), "second"), refusedCode)).toBe("refused RATE_LIMITED 1");
    expect(ran).toBe(false);
    // Operators and anonymous callers are nobody's share.
    expect(await ops.run({ kind: "operator" }, async () => "operator", refusedCode)).toBe("operator");
    expect(await ops.run({ kind: "anonymous" }, async () => "anonymous", refusedCode)).toBe("anonymous");
    hold.resolve();
    expect(await first).toBe("first");
  });

  it("outsideSlot lets another operation run while one sleeps, then takes the slot back", async () => {
    const gate = new TenantGate({ share: 1 });
    const ops = new TenantOperations(gate);
    const wake = deferred();
    const order: string[] = [];
    const poll = ops.run(
      tenant("a"),
      async () => {
        await outsideSlot(() => wake.promise);
        order.push("poll looks again");
        return gate.load("a");
      },
      refusedCode,
    );
    // The poll sleeps without its slot: a submission of the same tenant runs meanwhile.
    await ops.run(tenant("a"), async () => order.push("submit"), refusedCode);
    wake.resolve();
    expect(await poll).toEqual({ running: 1, waiting: 0 });
    expect(order).toEqual(["submit", "poll looks again"]);
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });

  it("outsideSlot of two root fields of one operation releases and takes back one slot", async () => {
    const gate = new TenantGate({ share: 1 });
    const ops = new TenantOperations(gate);
    const loads = await ops.run(
      tenant("a"),
      async () => {
        const sleep = () => outsideSlot(async () => gate.load("a"));
        return Promise.all([sleep(), sleep()]);
      },
      refusedCode,
    );
    expect(loads[0]).toEqual({ running: 0, waiting: 0 });
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });

  it("outsideSlot outside any operation just runs the sleep", async () => {
    expect(await outsideSlot(async () => "slept")).toBe("slept");
  });

  it("answers RATE_LIMITED when the slot cannot be had back within the wait, and leaks none", async () => {
    const gate = new TenantGate({ share: 1, maxWaiting: 0 });
    const ops = new TenantOperations(gate);
    const hold = deferred();
    const woke = deferred();
    let other: Promise<string> | undefined;
    const poll = ops.run(
      tenant("a"),
      () =>
        outsideSlot(async () => {
          // Another operation takes the slot while the poll sleeps; the poll's queue has no room.
          other = ops.run(tenant("a"), () => hold.promise.then(() => "other"), refusedCode);
          woke.resolve();
        }).then(
          () => "looked again",
          (error: { extensions: Record<string, unknown> }) => refusedCode(error),
        ),
      refusedCode,
    );
    await woke.promise;
    expect(await poll).toBe("refused RATE_LIMITED 1");
    hold.resolve();
    expect(await other).toBe("other");
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });
});
