import { describe, expect, it } from "vitest";
import { TaskStatus, TERMINAL_TASK_STATUSES } from "./statuses.js";
import { TRANSITIONS, TaskTransition, allowedFrom, canTransition } from "./task-state-machine.js";

const ALL_STATUSES = Object.values(TaskStatus);
const RULES = Object.entries(TRANSITIONS) as Array<[TaskTransition, { from: readonly TaskStatus[]; to: readonly TaskStatus[] }]>;

describe("TRANSITIONS table", () => {
  it("has one rule per named transition", () => {
    expect(Object.keys(TRANSITIONS).sort()).toEqual(Object.values(TaskTransition).sort());
  });

  it.each(RULES)("%s: non-empty, no duplicates, no self-loops, only known statuses", (_name, rule) => {
    expect(rule.from.length).toBeGreaterThan(0);
    expect(rule.to.length).toBeGreaterThan(0);
    expect(new Set(rule.from).size).toBe(rule.from.length);
    expect(new Set(rule.to).size).toBe(rule.to.length);
    for (const s of [...rule.from, ...rule.to]) expect(ALL_STATUSES).toContain(s);
    for (const s of rule.from) expect(rule.to).not.toContain(s);
  });

  it("terminal statuses have no way out except a dead task's redrive or discard", () => {
    const exits = RULES.flatMap(([name, rule]) =>
      rule.from.filter((s) => TERMINAL_TASK_STATUSES.includes(s)).flatMap((from) => rule.to.map((to) => `${name}:${from}->${to}`)),
    );
    expect(exits).toEqual(["redrive:DEAD->QUEUED", "discard:DEAD->CANCELLED"]);
  });

  it("every status is reachable and every non-terminal status can reach a terminal one", () => {
    const targets = new Set(RULES.flatMap(([, r]) => r.to));
    // SCHEDULED and BLOCKED are initial states (submission, workflow creation).
    for (const s of ALL_STATUSES) {
      if (s !== TaskStatus.SCHEDULED && s !== TaskStatus.BLOCKED) expect(targets).toContain(s);
    }
    for (const s of ALL_STATUSES.filter((x) => !TERMINAL_TASK_STATUSES.includes(x))) {
      const seen = new Set<TaskStatus>([s]);
      const todo = [s];
      while (todo.length > 0) {
        const cur = todo.pop() as TaskStatus;
        for (const [, r] of RULES) if (r.from.includes(cur)) for (const t of r.to) if (!seen.has(t)) (seen.add(t), todo.push(t));
      }
      expect([...seen].some((x) => TERMINAL_TASK_STATUSES.includes(x)), s).toBe(true);
    }
  });
});

describe("canTransition", () => {
  it("accepts the documented edges", () => {
    expect(canTransition("promote", "SCHEDULED", "QUEUED")).toBe(true);
    expect(canTransition("start", "RETRYING", "RUNNING")).toBe(true);
    expect(canTransition("cancel", "RUNNING", "CANCELLED")).toBe(true);
    expect(canTransition("leaseExpired", "RUNNING", "DEAD")).toBe(true);
    expect(canTransition("leaseExpired", "RUNNING", "QUEUED")).toBe(true);
    expect(canTransition("skip", "BLOCKED", "SKIPPED")).toBe(true);
  });

  it("refuses a wrong source or a wrong target", () => {
    expect(canTransition("succeed", "QUEUED", "SUCCEEDED")).toBe(false);
    expect(canTransition("cancel", "SUCCEEDED", "CANCELLED")).toBe(false);
    expect(canTransition("retry", "RUNNING", "QUEUED")).toBe(false);
    expect(canTransition("redrive", "CANCELLED", "QUEUED")).toBe(false);
    expect(canTransition("skip", "RUNNING", "SKIPPED")).toBe(false);
    expect(canTransition("leaseExpired", "RUNNING", "SUCCEEDED")).toBe(false);
  });

  it("allowedFrom returns the guard set", () => {
    expect([...allowedFrom("cancel")].sort()).toEqual(["BLOCKED", "QUEUED", "RETRYING", "RUNNING", "SCHEDULED"]);
    expect(allowedFrom("redrive")).toEqual(["DEAD"]);
  });
});
