import { describe, expect, it } from "vitest";
import { BadUserInputError } from "../errors.js";
import { newId } from "../ids.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../limits.js";
import { auditPageSchema, taskCursor, taskPageSchema, workflowPageSchema } from "./pagination.js";
import { parseInput } from "./parse.js";
import { rateLimitInputSchema, upsertQueueInputSchema } from "./queue.js";
import { createTenantInputSchema, tenantLimitsInputSchema } from "./tenant.js";

describe("rateLimitInputSchema", () => {
  const r = (x: Record<string, unknown>) => rateLimitInputSchema.safeParse(x).success;
  it("perSecond > 0 and <= 100000; burst int 1..1e6", () => {
    expect(r({ perSecond: 0.001 })).toBe(true);
    expect(r({ perSecond: 100_000, burst: 1_000_000 })).toBe(true);
    expect(r({ perSecond: 0 })).toBe(false);
    expect(r({ perSecond: 100_000.5 })).toBe(false);
    expect(r({ perSecond: 1, burst: 0 })).toBe(false);
    expect(r({ perSecond: 1, burst: 1_000_001 })).toBe(false);
    expect(r({ perSecond: 1, burst: 1.5 })).toBe(false);
    expect(r({ perSecond: 1, burst: null })).toBe(true);
  });
});

describe("upsertQueueInputSchema", () => {
  const q = (x: Record<string, unknown>) => upsertQueueInputSchema.safeParse({ name: "q", mode: "PULL", ...x });

  it("PUSH takes an http(s) endpointUrl, or none (an existing PUSH queue keeps its own; the gateway requires one otherwise)", () => {
    expect(q({ mode: "PUSH", endpointUrl: "https://example.com/run" }).success).toBe(true);
    expect(q({ mode: "PUSH" }).success).toBe(true);
    expect(q({ mode: "PUSH", endpointUrl: null }).success).toBe(true);
    expect(q({ mode: "PUSH", endpointUrl: "ftp://example.com/" }).success).toBe(false);
  });

  it("PULL forbids endpointUrl", () => {
    expect(q({}).success).toBe(true);
    expect(q({ endpointUrl: "https://example.com/run" }).success).toBe(false);
  });

  it("concurrency int 1..100000 or null; name pattern; mode enum", () => {
    expect(q({ concurrency: 1 }).success).toBe(true);
    expect(q({ concurrency: 100_000 }).success).toBe(true);
    expect(q({ concurrency: null }).success).toBe(true);
    expect(q({ concurrency: 0 }).success).toBe(false);
    expect(q({ concurrency: 100_001 }).success).toBe(false);
    expect(q({ name: "bad name" }).success).toBe(false);
    expect(q({ mode: "POLL" }).success).toBe(false);
    expect(q({ rateLimit: { perSecond: 0 } }).success).toBe(false);
    expect(q({ rateLimit: { perSecond: 5 }, paused: true }).success).toBe(true);
  });

  it("removeLimits names queue limits, never one set in the same input", () => {
    expect(q({ removeLimits: ["CONCURRENCY", "RATE_LIMIT"] }).success).toBe(true);
    expect(q({ removeLimits: ["CONCURRENCY"], rateLimit: { perSecond: 5 } }).success).toBe(true);
    expect(q({ removeLimits: ["MAX_CONCURRENCY"] }).success).toBe(false);
    const both = q({ removeLimits: ["CONCURRENCY"], concurrency: 3 });
    expect(both.success).toBe(false);
    expect(both.error?.issues[0]?.path).toEqual(["removeLimits"]);
    expect(q({ removeLimits: ["RATE_LIMIT"], rateLimit: { perSecond: 5 } }).success).toBe(false);
  });
});

describe("tenantLimitsInputSchema", () => {
  const t = (x: Record<string, unknown>) => tenantLimitsInputSchema.safeParse(x).success;
  it("bounds", () => {
    expect(t({})).toBe(true);
    expect(t({ weight: 1 })).toBe(true);
    expect(t({ weight: 1000 })).toBe(true);
    expect(t({ weight: 0 })).toBe(false);
    expect(t({ weight: 1001 })).toBe(false);
    expect(t({ apiRatePerSecond: 0.5, apiBurst: 1 })).toBe(true);
    expect(t({ apiRatePerSecond: 0 })).toBe(false);
    expect(t({ apiBurst: 0 })).toBe(false);
    for (const f of ["maxConcurrency", "maxPendingTasks", "dailyTaskQuota"]) {
      expect(t({ [f]: 0 }), f).toBe(true);
      expect(t({ [f]: null }), f).toBe(true);
      expect(t({ [f]: -1 }), f).toBe(false);
      expect(t({ [f]: 1.5 }), f).toBe(false);
    }
  });

  it("removeLimits names the limits that can be absent, never one set in the same input", () => {
    expect(t({ removeLimits: ["MAX_CONCURRENCY", "MAX_PENDING_TASKS", "DAILY_TASK_QUOTA"] })).toBe(true);
    expect(t({ removeLimits: ["MAX_CONCURRENCY"], dailyTaskQuota: 5 })).toBe(true);
    expect(t({ removeLimits: ["WEIGHT"] })).toBe(false);
    expect(t({ removeLimits: ["MAX_PENDING_TASKS"], maxPendingTasks: 10 })).toBe(false);
  });
});

describe("createTenantInputSchema", () => {
  it("name 1..200, not blank; limits optional", () => {
    expect(createTenantInputSchema.safeParse({ name: "acme" }).success).toBe(true);
    expect(createTenantInputSchema.safeParse({ name: "a".repeat(200), limits: { weight: 2 } }).success).toBe(true);
    expect(createTenantInputSchema.safeParse({ name: "a".repeat(201) }).success).toBe(false);
    expect(createTenantInputSchema.safeParse({ name: "" }).success).toBe(false);
    expect(createTenantInputSchema.safeParse({ name: " " }).success).toBe(false);
    expect(createTenantInputSchema.safeParse({ name: "a", limits: { weight: 0 } }).success).toBe(false);
  });
});

describe("page schemas", () => {
  const taskId = newId("task");
  const cursor = taskCursor.encode(taskId);

  it("defaults first and after", () => {
    expect(parseInput(taskPageSchema, {})).toEqual({ first: DEFAULT_PAGE_SIZE, after: null });
    expect(parseInput(taskPageSchema, { first: null, after: null })).toEqual({ first: DEFAULT_PAGE_SIZE, after: null });
    expect(parseInput(taskPageSchema, { first: MAX_PAGE_SIZE, after: cursor })).toEqual({ first: MAX_PAGE_SIZE, after: cursor });
  });

  it("bounds first", () => {
    expect(taskPageSchema.safeParse({ first: 0 }).success).toBe(false);
    expect(taskPageSchema.safeParse({ first: MAX_PAGE_SIZE + 1 }).success).toBe(false);
    expect(taskPageSchema.safeParse({ first: 1 }).success).toBe(true);
  });

  it("takes only the task cursors it hands out", () => {
    expect(taskCursor.decode(cursor)).toBe(taskId);
    for (const bad of ["c", taskId, `${cursor}=`, `${cursor}A`, taskCursor.encode(newId("wf")), "c".repeat(201)]) {
      expect(taskPageSchema.safeParse({ after: bad }).success).toBe(false);
    }
    expect(() => parseInput(taskPageSchema, { after: "c" })).toThrow(/after/);
  });

  it("takes event ids that fit a bigint, and workflow ids", () => {
    for (const good of ["0", "1", "9223372036854775807"]) expect(auditPageSchema.safeParse({ after: good }).success).toBe(true);
    for (const bad of ["-1", "01", "1.5", "9223372036854775808", "9999999999999999999", "x"]) {
      expect(auditPageSchema.safeParse({ after: bad }).success).toBe(false);
    }
    expect(workflowPageSchema.safeParse({ after: newId("wf") }).success).toBe(true);
    expect(workflowPageSchema.safeParse({ after: taskId }).success).toBe(false);
  });
});

describe("parseInput", () => {
  it("lists every issue with a dotted path", () => {
    try {
      parseInput(createTenantInputSchema, { name: "", limits: { weight: 0, apiBurst: 0 } });
      expect.unreachable();
    } catch (e: unknown) {
      expect(e).toBeInstanceOf(BadUserInputError);
      const err = e as BadUserInputError;
      expect(err.fieldErrors.map((f) => f.path).sort()).toEqual(["limits.apiBurst", "limits.weight", "name"]);
      expect(err.message).toMatch(/\(and 2 more\)$/);
      expect(err.extensions["fieldErrors"]).toBe(err.fieldErrors);
    }
  });

  it("names the input when it is not an object", () => {
    expect(() => parseInput(createTenantInputSchema, "nope")).toThrow(/^Invalid input: /);
  });
});
