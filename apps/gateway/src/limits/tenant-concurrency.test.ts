import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ConcurrencyRefusal, MAX_WAIT_MS, MAX_WAITING, TenantGate, tenantShare, type RefusalReason } from "./tenant-concurrency.js";

describe("tenantShare", () => {
  it("is a quarter of the pool rounded up by default, at least 2", () => {
    expect(tenantShare(10, 0.25)).toBe(3);
    expect(tenantShare(4, 0.25)).toBe(2);
    expect(tenantShare(20, 0.25)).toBe(5);
    expect(tenantShare(10, 0.01)).toBe(2);
    expect(tenantShare(10, 1)).toBe(10);
  });

  it("refuses a pool or fraction that makes no sense", () => {
    expect(() => tenantShare(0, 0.25)).toThrow(RangeError);
    expect(() => tenantShare(10, 0)).toThrow(RangeError);
    expect(() => tenantShare(Number.NaN, 0.25)).toThrow(RangeError);
  });
});

describe("TenantGate", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const settled = async <T>(promise: Promise<T>) => {
    let state: "pending" | "resolved" | "rejected" = "pending";
    promise.then(
      () => (state = "resolved"),
      () => (state = "rejected"),
    );
    await vi.advanceTimersByTimeAsync(0);
    return state;
  };

  it("admits `share` at once per tenant, queues the rest FIFO, and hands each released slot to the oldest waiter", async () => {
    const waits: number[] = [];
    const gate = new TenantGate({ share: 2, onWait: (d) => waits.push(d) });
    await gate.acquire("a");
    await gate.acquire("a");
    const order: number[] = [];
    const third = gate.acquire("a").then(() => order.push(3));
    const fourth = gate.acquire("a").then(() => order.push(4));
    // Another tenant is not behind a's queue.
    await gate.acquire("b");
    expect(gate.load("a")).toEqual({ running: 2, waiting: 2 });
    expect(await settled(third)).toBe("pending");
    gate.release("a");
    await third;
    expect(order).toEqual([3]);
    gate.release("a");
    await fourth;
    expect(order).toEqual([3, 4]);
    expect(gate.load("a")).toEqual({ running: 2, waiting: 0 });
    expect(waits).toEqual([1, 1, -1, -1]);
  });

  it("never lets a newcomer overtake a waiter", async () => {
    const gate = new TenantGate({ share: 1 });
    await gate.acquire("a");
    const waiter = gate.acquire("a");
    gate.release("a");
    // The slot went to the waiter: a newcomer queues behind it.
    const newcomer = gate.acquire("a");
    expect(await settled(waiter)).toBe("resolved");
    expect(await settled(newcomer)).toBe("pending");
    gate.release("a");
    expect(await settled(newcomer)).toBe("resolved");
  });

  it("refuses past MAX_WAITING waiters at once (queue_full)", async () => {
    const refusals: RefusalReason[] = [];
    const gate = new TenantGate({ share: 1, onRefusal: (r) => refusals.push(r) });
    await gate.acquire("a");
    const waiting = Array.from({ length: MAX_WAITING }, () => gate.acquire("a"));
    await expect(gate.acquire("a")).rejects.toEqual(new ConcurrencyRefusal("queue_full"));
    expect(refusals).toEqual(["queue_full"]);
    expect(gate.load("a").waiting).toBe(MAX_WAITING);
    for (let i = 0; i < MAX_WAITING + 1; i++) gate.release("a");
    await Promise.all(waiting);
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });

  it("refuses a waiter after MAX_WAIT_MS (wait_timeout) and forgets it", async () => {
    const refusals: RefusalReason[] = [];
    const waits: number[] = [];
    const gate = new TenantGate({ share: 1, onRefusal: (r) => refusals.push(r), onWait: (d) => waits.push(d) });
    await gate.acquire("a");
    const waiter = gate.acquire("a");
    const outcome = waiter.catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(MAX_WAIT_MS - 1);
    expect(await settled(waiter)).toBe("pending");
    await vi.advanceTimersByTimeAsync(1);
    expect(await outcome).toEqual(new ConcurrencyRefusal("wait_timeout"));
    expect(refusals).toEqual(["wait_timeout"]);
    expect(waits).toEqual([1, -1]);
    // Its place is gone: the release frees the slot instead of granting it to nobody.
    gate.release("a");
    expect(gate.load("a")).toEqual({ running: 0, waiting: 0 });
  });

  it("takes the queue bound and wait from its options", async () => {
    const gate = new TenantGate({ share: 1, maxWaiting: 1, maxWaitMs: 10 });
    await gate.acquire("a");
    const waiter = gate.acquire("a").catch((error: unknown) => error);
    await expect(gate.acquire("a")).rejects.toBeInstanceOf(ConcurrencyRefusal);
    await vi.advanceTimersByTimeAsync(10);
    expect(await waiter).toEqual(new ConcurrencyRefusal("wait_timeout"));
  });

  it("throws on a release without a slot", () => {
    const gate = new TenantGate({ share: 1 });
    expect(() => gate.release("a")).toThrow(/release without a slot/);
  });
});
