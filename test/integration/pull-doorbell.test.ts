/**
 * PullDoorbell (gateway): long-polling leases wake when a submission rings
 * their queue through Redis, including a ring that came while the lease was
 * still looking for work, before it began to wait.
 */
import { randomBytes } from "node:crypto";
import { createRedis } from "@tasklane/queue";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PullDoorbell } from "../../apps/gateway/src/services/pull-doorbell.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("PullDoorbell", () => {
  const channel = `tl-doorbell-${randomBytes(4).toString("hex")}`;
  const publisher = createRedis("redis://127.0.0.1:6379/0", "doorbell-test-pub");
  const subscriber = createRedis("redis://127.0.0.1:6379/0", "doorbell-test-sub");
  const doorbell = new PullDoorbell(publisher, subscriber, channel);

  beforeAll(async () => {
    // The first arm() subscribes; later rings reach it once that is done.
    const first = doorbell.arm("que_warm");
    await first.wait(1);
    first.disarm();
  });

  afterAll(() => {
    doorbell.close();
    publisher.disconnect();
  });

  it("a ring between arm() and wait() ends the wait at once", async () => {
    const bell = doorbell.arm("que_a");
    await doorbell.ring(["que_a"]);
    await sleep(100); // delivered before the wait begins
    const waitedFrom = Date.now();
    await bell.wait(5_000);
    bell.disarm();
    expect(Date.now() - waitedFrom).toBeLessThan(1_000);
  });

  it("a ring for another queue does not end the wait; a ring for this one does", async () => {
    const bell = doorbell.arm("que_b");
    const waitedFrom = Date.now();
    const waiting = bell.wait(5_000);
    await sleep(50);
    await doorbell.ring(["que_other"]);
    await sleep(300);
    await doorbell.ring(["que_b"]);
    await waiting;
    bell.disarm();
    const waited = Date.now() - waitedFrom;
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(4_000);
  });

  it("ends the wait when the lease call is aborted, and after `ms` without a ring", async () => {
    const aborted = new AbortController();
    const bell = doorbell.arm("que_c");
    const waitedFrom = Date.now();
    setTimeout(() => aborted.abort(), 50);
    await bell.wait(5_000, aborted.signal);
    expect(Date.now() - waitedFrom).toBeLessThan(1_000);
    const timedFrom = Date.now();
    await bell.wait(150);
    bell.disarm();
    expect(Date.now() - timedFrom).toBeGreaterThanOrEqual(140);
  });
});
