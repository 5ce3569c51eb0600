import { describe, expect, it } from "vitest";
import { TASK_LINE_FIELDS, readTaskLines } from "./task-lines.js";

const ndjson = (...lines: unknown[]) => lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");

describe("readTaskLines", () => {
  it("reads one task a line, applying --queue to every task and --type where a line has none; blank lines are not tasks", () => {
    const text = ndjson({ type: "a", payload: { n: 1 } }, "", { payload: { n: 2 }, priority: "HIGH" }, "   ", { type: "c", queue: "q", delaySeconds: 5 }) + "\n";
    const { tasks, skipped, errors } = readTaskLines(text, { queue: "q", type: "default.type" });
    expect(errors).toEqual([]);
    expect(skipped).toBe(0);
    expect(tasks).toEqual([
      { line: 1, input: { type: "a", queue: "q", payload: { n: 1 } } },
      { line: 3, input: { type: "default.type", queue: "q", payload: { n: 2 }, priority: "HIGH" } },
      { line: 5, input: { type: "c", queue: "q", delaySeconds: 5 } },
    ]);
  });

  it("reports every bad line with its number, as the SDK's validation words it", () => {
    const text = ndjson(
      { type: "ok" },
      "{not json",
      [1, 2],
      { type: "x", priority: "URGENT" },
      { type: "x", runAt: "2027-01-01T00:00:00" },
      { type: "x", runAt: new Date(Date.now() + 3_600_000).toISOString(), delaySeconds: 1 },
      { type: "x", queue: "other" },
      { type: "x", colour: "red" },
      { payload: {} },
      { type: "x", maxAttempts: 0, timeoutSeconds: -1 },
    );
    const { tasks, errors } = readTaskLines(text, { queue: "q" });
    expect(tasks.map((t) => t.line)).toEqual([1]);
    const byLine = new Map<number, string[]>();
    for (const e of errors) byLine.set(e.line, [...(byLine.get(e.line) ?? []), e.message]);
    expect([...byLine.keys()]).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(byLine.get(2)?.[0]).toMatch(/^not JSON: /);
    expect(byLine.get(3)).toEqual(["expected a JSON object: one task spec per line"]);
    expect(byLine.get(4)?.[0]).toMatch(/^priority: /);
    // A runAt without an offset would be read in this machine's zone: the SDK refuses it.
    expect(byLine.get(5)?.[0]).toMatch(/^runAt: must be a Date or an ISO-8601 string with a time zone offset/);
    expect(byLine.get(6)).toEqual(["delaySeconds: runAt and delaySeconds are mutually exclusive"]);
    expect(byLine.get(7)).toEqual(['queue "other" is not --queue "q"']);
    expect(byLine.get(8)?.[0]).toMatch(/^unknown field "colour" \(a line holds SubmitTaskInput's fields: type, queue, payload/);
    expect(byLine.get(9)).toEqual(["type is missing (give it on the line or with --type)"]);
    expect(byLine.get(10)?.map((m) => m.split(":")[0])).toEqual(["maxAttempts", "timeoutSeconds"]);
  });

  it("skips the first --skip task lines, blank lines not counted, and checks only what it will send", () => {
    const text = ndjson({ type: "a" }, "", "{bad", { type: "c" }, { type: "d" });
    const { tasks, skipped, errors } = readTaskLines(text, { queue: "q", skip: 2 });
    expect(errors).toEqual([]);
    expect(skipped).toBe(2);
    expect(tasks.map((t) => [t.line, t.input.type])).toEqual([
      [4, "c"],
      [5, "d"],
    ]);
    expect(readTaskLines(text, { queue: "q", skip: 10 })).toEqual({ tasks: [], skipped: 4, errors: [], tooMany: false });
  });

  it("stops reading past maxTasks task lines after the skipped ones, and says so", () => {
    const text = ndjson({ type: "a" }, "", { type: "b" }, { type: "c" }, { type: "d" });
    expect(readTaskLines(text, { queue: "q", skip: 1, maxTasks: 3 })).toMatchObject({ tooMany: false, skipped: 1 });
    const over = readTaskLines(text, { queue: "q", skip: 1, maxTasks: 2 });
    expect(over.tooMany).toBe(true);
    expect(over.tasks.map((t) => t.input.type)).toEqual(["b", "c"]);
  });

  it("reads CRLF files and a leading byte-order mark", () => {
    const { tasks, errors } = readTaskLines(`\uFEFF${JSON.stringify({ type: "a" })}\r\n${JSON.stringify({ type: "b" })}\r\n`, { queue: "q" });
    expect(errors).toEqual([]);
    expect(tasks.map((t) => t.input.type)).toEqual(["a", "b"]);
  });

  it("allows exactly SubmitTaskInput's fields", () => {
    expect([...TASK_LINE_FIELDS].sort()).toEqual(
      ["backoff", "callbackUrl", "delaySeconds", "idempotencyKey", "maxAttempts", "metadata", "orderingKey", "payload", "priority", "queue", "runAt", "timeoutSeconds", "type"].sort(),
    );
  });
});
