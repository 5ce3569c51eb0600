import { describe, expect, it } from "vitest";
import { BadUserInputError } from "../errors.js";
import { MAX_PAYLOAD_BYTES } from "../limits.js";
import { parseInput } from "./parse.js";
import {
  createScheduleInputSchema,
  taskTemplateInputSchema,
  updateScheduleInputSchema,
  validateCronPair,
} from "./schedule.js";

const base = { name: "nightly", cron: "0 3 * * *", task: { type: "report" } };
const create = (x: Record<string, unknown>) => createScheduleInputSchema.safeParse({ ...base, ...x });
const pathsOf = (r: { error?: { issues: { path: PropertyKey[] }[] } }) => r.error?.issues.map((i) => i.path.join("."));

describe("taskTemplateInputSchema", () => {
  const t = (x: Record<string, unknown>) => taskTemplateInputSchema.safeParse({ type: "t", ...x }).success;
  it("reuses the task field rules", () => {
    expect(t({})).toBe(true);
    expect(t({ queue: null, payload: null, priority: null, maxAttempts: null, backoff: null, timeoutSeconds: null })).toBe(true);
    expect(t({ type: " " })).toBe(false);
    expect(t({ queue: "bad name" })).toBe(false);
    expect(t({ payload: "x".repeat(MAX_PAYLOAD_BYTES) })).toBe(false);
    expect(t({ priority: "URGENT" })).toBe(false);
    expect(t({ maxAttempts: 0 })).toBe(false);
    expect(t({ backoff: { strategy: "FIXED", delaySeconds: -1 } })).toBe(false);
    expect(t({ timeoutSeconds: 0 })).toBe(false);
    expect(t({ queue: "emails", priority: "HIGH", maxAttempts: 5, timeoutSeconds: 60, backoff: { strategy: "LINEAR", delaySeconds: 2 } })).toBe(
      true,
    );
  });
});

describe("createScheduleInputSchema", () => {
  it("defaults the time zone to UTC and leaves the policies to the caller", () => {
    expect(parseInput(createScheduleInputSchema, base)).toEqual({
      name: "nightly",
      cron: "0 3 * * *",
      timezone: "UTC",
      task: { type: "report" },
    });
    expect(parseInput(createScheduleInputSchema, { ...base, timezone: null }).timezone).toBe("UTC");
  });

  it("accepts a full input", () => {
    const r = create({ cron: "*/2 * * * * *", timezone: "Asia/Kolkata", misfirePolicy: "CATCH_UP", overlapPolicy: "QUEUE", enabled: false });
    expect(r.success).toBe(true);
  });

  it("name: 1..200, not blank", () => {
    expect(create({ name: "a".repeat(200) }).success).toBe(true);
    expect(create({ name: "a".repeat(201) }).success).toBe(false);
    expect(create({ name: "" }).success).toBe(false);
    expect(create({ name: "  " }).success).toBe(false);
  });

  it.each(["* * *", "61 * * * *", "* * * * * * *", "* * * * *; DROP TABLE", "⏰ * * * *", ""])("cron %j is refused on cron", (cron) => {
    expect(pathsOf(create({ cron }))).toEqual(["cron"]);
  });

  it.each(["Mars/Olympus", "UTC; DROP", ""])("timezone %j is refused on timezone", (timezone) => {
    expect(pathsOf(create({ timezone }))).toEqual(["timezone"]);
  });

  it("enums and the task are checked", () => {
    expect(pathsOf(create({ misfirePolicy: "SOMETIMES" }))).toEqual(["misfirePolicy"]);
    expect(pathsOf(create({ overlapPolicy: "skip" }))).toEqual(["overlapPolicy"]);
    expect(pathsOf(create({ task: { type: "" } }))).toEqual(["task.type"]);
    expect(pathsOf(create({ task: null }))).toEqual(["task"]);
  });

  it("reports through parseInput as BAD_USER_INPUT with both fields", () => {
    try {
      parseInput(createScheduleInputSchema, { ...base, cron: "* * *", timezone: "Mars/Olympus" });
      expect.unreachable();
    } catch (e: unknown) {
      expect(e).toBeInstanceOf(BadUserInputError);
      expect((e as BadUserInputError).fieldErrors.map((f) => f.path)).toEqual(["cron", "timezone"]);
    }
  });
});

describe("updateScheduleInputSchema", () => {
  const u = (x: Record<string, unknown>) => updateScheduleInputSchema.safeParse(x);
  it("everything is optional and has no defaults", () => {
    expect(parseInput(updateScheduleInputSchema, {})).toEqual({});
    expect(u({ cron: null, timezone: null, task: null, misfirePolicy: null, overlapPolicy: null, enabled: null }).success).toBe(true);
  });

  it("checks cron and timezone when given, each on its own", () => {
    expect(u({ cron: "0 9 * * MON" }).success).toBe(true);
    expect(u({ timezone: "Europe/Berlin" }).success).toBe(true);
    expect(pathsOf(u({ cron: "61 * * * *" }))).toEqual(["cron"]);
    expect(pathsOf(u({ timezone: "Mars/Olympus" }))).toEqual(["timezone"]);
  });
});

describe("validateCronPair", () => {
  it("returns a valid pair and refuses a bad half with its field named", () => {
    expect(validateCronPair("0 9 * * *", "Europe/Berlin")).toEqual({ cron: "0 9 * * *", timezone: "Europe/Berlin" });
    expect(() => validateCronPair("0 9 * * *", "Mars/Olympus")).toThrow(
      expect.objectContaining({ fieldErrors: [expect.objectContaining({ path: "timezone" })] }),
    );
    expect(() => validateCronPair("0 9 * *", "UTC")).toThrow(
      expect.objectContaining({ fieldErrors: [expect.objectContaining({ path: "cron" })] }),
    );
  });
});
