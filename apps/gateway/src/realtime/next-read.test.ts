import { describe, expect, it } from "vitest";
import { NextRead } from "./next-read.js";

/** A read whose answers the test releases one at a time; each answers how many reads had started when it did. */
function gatedReads() {
  const gates: Array<() => void> = [];
  let started = 0;
  const read = async () => {
    started += 1;
    const n = started;
    await new Promise<void>((resolve) => gates.push(resolve));
    return n;
  };
  return { read, release: () => gates.shift()?.(), started: () => started };
}

describe("NextRead", () => {
  it("gives callers that ask while a read is out one read started after them, not the one out", async () => {
    const reads = gatedReads();
    const next = new NextRead(reads.read);
    const first = next.get();
    const second = next.get();
    const third = next.get();
    expect(reads.started()).toBe(1);
    expect(second).toBe(third);
    reads.release();
    expect(await first).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(reads.started()).toBe(2);
    reads.release();
    expect(await second).toBe(2);
    expect(await third).toBe(2);
  });

  it("starts a read at once when none is out, and shares a failure only with those who asked for that read", async () => {
    let calls = 0;
    const next = new NextRead(async () => {
      calls += 1;
      if (calls === 1) throw new Error("down");
      return calls;
    });
    await expect(next.get()).rejects.toThrow("down");
    expect(await next.get()).toBe(2);
    expect(await next.get()).toBe(3);
  });
});
