import { describe, expect, it } from "vitest";
import { EventExecutions } from "./event-executions.js";

/** A resolution that runs until `finish()`; records when it started. */
function pending(started: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { run: () => (started.push(name), done.then(() => name)), finish: () => finish() };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("EventExecutions", () => {
  it("runs at most perTenant of a tenant's events at once, the rest in arrival order", async () => {
    const gate = new EventExecutions(2, 8);
    const started: string[] = [];
    const jobs = ["a1", "a2", "a3", "a4"].map((n) => pending(started, n));
    const results = jobs.map((j) => gate.run("a", j.run));
    await settle();
    expect(started).toEqual(["a1", "a2"]);
    expect(gate.load).toEqual({ running: 2, waiting: 2 });
    jobs[1]!.finish();
    await settle();
    expect(started).toEqual(["a1", "a2", "a3"]);
    for (const j of jobs) j.finish();
    expect(await Promise.all(results)).toEqual(["a1", "a2", "a3", "a4"]);
    expect(gate.load).toEqual({ running: 0, waiting: 0 });
  });

  it("lets another tenant pass a tenant at its share, and holds every tenant to perGateway together", async () => {
    const gate = new EventExecutions(2, 3);
    const started: string[] = [];
    const names = ["a1", "a2", "a3", "b1", "c1", "b2"];
    const jobs = new Map(names.map((n) => [n, pending(started, n)]));
    // The tenant is the name's first letter.
    const results = names.map((n) => gate.run(n.slice(0, 1), jobs.get(n)!.run));
    await settle();
    // a3 waits for a's share; b1 passes it; c1 and b2 wait for the gateway's 3.
    expect(started).toEqual(["a1", "a2", "b1"]);
    jobs.get("a1")!.finish();
    await settle();
    // The first waiter with room is a3 (a is under its share again).
    expect(started).toEqual(["a1", "a2", "b1", "a3"]);
    jobs.get("a2")!.finish();
    await settle();
    // c1 before b2: arrival order, each with room.
    expect(started).toEqual(["a1", "a2", "b1", "a3", "c1"]);
    for (const j of jobs.values()) j.finish();
    await Promise.all(results);
    expect(started).toHaveLength(6);
  });

  it("frees the slot of a resolution that throws", async () => {
    const gate = new EventExecutions(1, 1);
    await expect(gate.run("a", () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    expect(await gate.run("a", () => "next")).toBe("next");
  });
});
