import { describe, expect, it } from "vitest";
import { recordingIo } from "../test-support/recording-io.js";
import { TasklaneError } from "@tasklane/sdk";
import { formatTasklaneError } from "../errors.js";
import { duration, printable, time } from "./format.js";
import { describeProgress, startProgress } from "./progress.js";
import { MAX_CELL_WIDTH, formatFields, formatTable } from "./table.js";

describe("formatTable", () => {
  it("pads every column but the last to its widest cell, two spaces apart", () => {
    expect(formatTable(["ID", "STATUS", "ERROR"], [["task_1", "QUEUED", "-"], ["task_22", "DEAD", "boom"]])).toBe(
      ["ID       STATUS  ERROR", "task_1   QUEUED  -", "task_22  DEAD    boom", ""].join("\n"),
    );
  });

  it("keeps each row on one line and cuts long cells", () => {
    const out = formatTable(["A", "B"], [["x", `line one\nline two ${"y".repeat(100)}`]]);
    const row = out.split("\n")[1]!;
    expect(row.startsWith("x  line one line two y")).toBe(true);
    expect(Array.from(row.slice(3))).toHaveLength(MAX_CELL_WIDTH);
    expect(row.endsWith("…")).toBe(true);
  });

  it("formatFields aligns the values", () => {
    expect(formatFields([["id", "task_1"], ["last error", "-"]])).toBe("id          task_1\nlast error  -\n");
  });
});

describe("progress", () => {
  it("says count/total, rate and ETA", () => {
    expect(describeProgress({ done: 0, total: 1_200, elapsedMs: 0 }, "tasks")).toBe("0/1,200 tasks");
    expect(describeProgress({ done: 500, total: 1_500, elapsedMs: 250 }, "tasks")).toBe("500/1,500 tasks  2,000/s  ETA 0.5 s");
    expect(describeProgress({ done: 1_000, total: 50_000, elapsedMs: 2_000 }, "tasks")).toBe("1,000/50,000 tasks  500/s  ETA 1 min 38 s");
    expect(describeProgress({ done: 1_200, total: 1_200, elapsedMs: 600 }, "tasks")).toBe("1,200/1,200 tasks  2,000/s");
  });

  it("rewrites one line on a terminal; elsewhere writes a line a step; --quiet writes nothing", () => {
    let now = 0;
    const clock = () => now;
    const tty = recordingIo({ stderrIsTTY: true });
    const p = startProgress(tty, { total: 20, noun: "tasks", now: clock });
    now = 1_000;
    p.update(10);
    p.note("refused, waiting");
    p.update(20);
    p.finish();
    expect(tty.stderr).toBe("\r10/20 tasks  10/s  ETA 1.0 s\u001b[K\nrefused, waiting\n\r20/20 tasks  20/s\u001b[K\n");

    const log = recordingIo();
    const q = startProgress(log, { total: 20, noun: "tasks", now: clock });
    q.update(10);
    q.finish();
    expect(log.stderr).toBe("10/20 tasks\n");

    const quiet = recordingIo({ stderrIsTTY: true });
    const r = startProgress(quiet, { total: 20, noun: "tasks", quiet: true });
    r.update(10);
    r.finish();
    expect(quiet.stderr).toBe("");
  });
});

describe("text from the API on a terminal", () => {
  // A worker's error (or a type, a queue name) may hold escape sequences: they must reach the terminal as text.
  const hostile = "boom\u001b]0;pwned\u0007\u001b[2J\tend\r";

  it("printable shows control characters as \\u escapes, keeps line breaks, turns tabs into a space", () => {
    expect(printable(hostile)).toBe("boom\\u001b]0;pwned\\u0007\\u001b[2J end\\u000d");
    expect(printable("a\r\nb\u009bc")).toBe("a\nb\\u009bc");
  });

  it("tables, fields and API errors carry no control character", () => {
    const outputs = [
      formatTable(["ID", "LAST ERROR"], [["task_1", hostile]]),
      formatFields([["last error", hostile]]),
      formatTasklaneError(new TasklaneError("CONFLICT", hostile, { extensions: { fieldErrors: [{ path: "type", message: hostile }] } })),
    ];
    for (const out of outputs) expect(out.replace(/\n/g, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe("format", () => {
  it("shows API times in UTC to the second", () => {
    expect(time("2026-12-06T09:55:01.123Z")).toBe("2026-12-06 09:55:01Z");
    expect(time(null)).toBe("-");
  });

  it("shows durations readably", () => {
    expect([0, 2_440, 45_000, 200_000, 7_500_000].map(duration)).toEqual(["0.0 s", "2.4 s", "45 s", "3 min 20 s", "2 h 05 min"]);
  });
});
