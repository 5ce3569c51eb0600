import { describe, expect, it } from "vitest";
import { BadUserInputError } from "../errors.js";
import { validateWorkflowGraph, type WorkflowNode } from "./workflow-graph.js";

function problems(tasks: WorkflowNode[]): { message: string; paths: string[]; messages: string[] } {
  try {
    validateWorkflowGraph(tasks);
  } catch (e: unknown) {
    expect(e).toBeInstanceOf(BadUserInputError);
    const err = e as BadUserInputError;
    expect(err.code).toBe("BAD_USER_INPUT");
    return { message: err.message, paths: err.fieldErrors.map((f) => f.path), messages: err.fieldErrors.map((f) => f.message) };
  }
  throw new Error("expected the graph to be refused");
}

describe("validateWorkflowGraph", () => {
  it("orders a diamond parents first, ties in input order", () => {
    const order = validateWorkflowGraph([
      { key: "join", dependsOn: ["left", "right"] },
      { key: "right", dependsOn: ["root"] },
      { key: "left", dependsOn: ["root"] },
      { key: "root" },
    ]);
    expect(order).toEqual(["root", "right", "left", "join"]);
  });

  it("accepts a single task, null dependsOn and a repeated dependency", () => {
    expect(validateWorkflowGraph([{ key: "only", dependsOn: null }])).toEqual(["only"]);
    expect(validateWorkflowGraph([{ key: "a" }, { key: "b", dependsOn: ["a", "a"] }])).toEqual(["a", "b"]);
  });

  it("orders a 2,000-task chain given in reverse", () => {
    const tasks = Array.from({ length: 2000 }, (_, i) => ({ key: `s${1999 - i}`, dependsOn: i === 1999 ? [] : [`s${1998 - i}`] }));
    const order = validateWorkflowGraph(tasks);
    expect(order[0]).toBe("s0");
    expect(order[1999]).toBe("s1999");
  });

  it("names duplicate keys", () => {
    const p = problems([{ key: "a" }, { key: "b" }, { key: "a" }]);
    expect(p.paths).toEqual(["tasks.2.key"]);
    expect(p.message).toContain('duplicate key "a"');
  });

  it("names the task and the unknown dependency", () => {
    const p = problems([{ key: "a" }, { key: "b", dependsOn: ["a", "ghost"] }]);
    expect(p.paths).toEqual(["tasks.1.dependsOn.1"]);
    expect(p.message).toContain('task "b" depends on unknown key "ghost"');
  });

  it("refuses a self-dependency", () => {
    const p = problems([{ key: "a", dependsOn: ["a"] }]);
    expect(p.paths).toEqual(["tasks.0.dependsOn.0"]);
    expect(p.message).toContain('task "a" depends on itself');
  });

  it("names the keys of a cycle in run order, not the tasks merely behind it", () => {
    const p = problems([
      { key: "start" },
      { key: "a", dependsOn: ["start", "c"] },
      { key: "b", dependsOn: ["a"] },
      { key: "c", dependsOn: ["b"] },
      { key: "after", dependsOn: ["c"] },
    ]);
    expect(p.messages).toEqual(["dependency cycle: a -> b -> c -> a"]);
    expect(p.paths).toEqual(["tasks.1.dependsOn"]);
    expect(p.message).not.toContain("after");
  });

  it("reports every problem at once, each cycle once", () => {
    const p = problems([
      { key: "x", dependsOn: ["y"] },
      { key: "y", dependsOn: ["x"] },
      { key: "p", dependsOn: ["q", "nope"] },
      { key: "q", dependsOn: ["p"] },
      { key: "s", dependsOn: ["s"] },
    ]);
    expect(p.messages).toEqual([
      'task "p" depends on unknown key "nope"',
      'task "s" depends on itself',
      "dependency cycle: x -> y -> x",
      "dependency cycle: p -> q -> p",
    ]);
  });

  it("does not look for cycles among duplicate keys", () => {
    const p = problems([{ key: "a", dependsOn: ["b"] }, { key: "b", dependsOn: ["a"] }, { key: "a" }]);
    expect(p.messages).toEqual(['duplicate key "a" (first used by tasks.0)']);
  });

  it("orders a join of 20,000 parents without comparing each dependency with the others", () => {
    const N = 20_000;
    const tasks = [...Array.from({ length: N }, (_, i) => ({ key: `p${i}` })), { key: "join", dependsOn: Array.from({ length: N }, (_, i) => `p${i}`) }];
    const started = performance.now();
    const order = validateWorkflowGraph(tasks);
    // An indexOf per dependency (quadratic) took ~720 ms here; a pass over them takes 20-100 ms on a busy box.
    expect(performance.now() - started).toBeLessThan(400);
    expect(order.at(-1)).toBe("join");
  });

  it("answers at most 100 field errors and counts the rest in one more", () => {
    const p = problems(Array.from({ length: 3 }, (_, j) => ({ key: `j${j}`, dependsOn: Array.from({ length: 50 }, (_, i) => `nope${i}`) })));
    expect(p.messages).toHaveLength(101);
    expect(p.paths.slice(0, 2)).toEqual(["tasks.0.dependsOn.0", "tasks.0.dependsOn.1"]);
    expect(p.messages.at(-1)).toBe("and 50 more problem(s)");
    expect(p.message).toMatch(/\(and 145 more\)$/);
  });

  it("summarises past ten cycles", () => {
    const tasks = Array.from({ length: 12 }, (_, i) => [
      { key: `a${i}`, dependsOn: [`b${i}`] },
      { key: `b${i}`, dependsOn: [`a${i}`] },
    ]).flat();
    const p = problems(tasks);
    expect(p.messages.filter((m) => m.startsWith("dependency cycle"))).toHaveLength(10);
    expect(p.messages.at(-1)).toBe("and 2 more dependency cycle(s)");
    expect(p.message).toMatch(/\(and 6 more\)$/);
  });
});
