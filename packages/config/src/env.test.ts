import { describe, expect, it, vi } from "vitest";
import { ConfigError, baseEnvSchema, gatewayEnvSchema, loadEnv, loadEnvOrExit, notifierEnvSchema, schedulerEnvSchema, workerEnvSchema } from "./env.js";

/** The problems loadEnv reports for `env`, as "VARIABLE: message" lines. */
function problems(schema: Parameters<typeof loadEnv>[0], env: Record<string, string>): string[] {
  try {
    loadEnv(schema, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map((p) => `${p.variable}: ${p.message}`);
    throw error;
  }
  return [];
}

describe("loadEnv", () => {
  it("names each bad variable, what it expects and what it got", () => {
    expect(problems(gatewayEnvSchema, { PORT: "abc", LOG_LEVEL: "loud", DATABASE_URL: "notaurl", ALLOW_PRIVATE_TARGETS: "yes" })).toEqual([
      'DATABASE_URL: expected a URL like postgresql://user@host:5432/tasklane, got "notaurl"',
      'LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"',
      'ALLOW_PRIVATE_TARGETS: expected 0, 1, true or false, got "yes"',
      'PORT: expected an integer from 0 to 65535, got "abc"',
    ]);
    expect(problems(notifierEnvSchema, { WEBHOOK_RETRY_SCHEDULE: "x" })).toEqual([
      'WEBHOOK_RETRY_SCHEDULE: expected comma-separated non-negative seconds, e.g. 5,30,120, got "x"',
    ]);
  });

  it("refuses a blank number instead of reading it as 0", () => {
    expect(problems(gatewayEnvSchema, { PORT: " " })).toEqual(['PORT: expected an integer from 0 to 65535, got " "']);
    for (const bad of [" ", "0x10", "Infinity", "1.5", "-1", "70000"]) expect(problems(workerEnvSchema, { METRICS_PORT: bad }), bad).toHaveLength(1);
    expect(loadEnv(gatewayEnvSchema, { PORT: " 4001 " }).PORT).toBe(4001);
    // An empty variable is unset (the default), the way shells and compose files mean it.
    expect(loadEnv(gatewayEnvSchema, { PORT: "" }).PORT).toBe(4000);
  });

  it("reads TENANT_POOL_SHARE as a fraction of the pool, 0.25 when unset", () => {
    expect(loadEnv(gatewayEnvSchema, {}).TENANT_POOL_SHARE).toBe(0.25);
    expect(loadEnv(gatewayEnvSchema, { TENANT_POOL_SHARE: "0.5" }).TENANT_POOL_SHARE).toBe(0.5);
    for (const bad of ["0", "1.5", "-0.25", "a quarter"]) {
      expect(problems(gatewayEnvSchema, { TENANT_POOL_SHARE: bad }), bad).toEqual([`TENANT_POOL_SHARE: expected a number > 0 and <= 1, got "${bad}"`]);
    }
  });

  it("reads METRICS_HOST for every background app, unset meaning every interface", () => {
    for (const schema of [schedulerEnvSchema, workerEnvSchema, notifierEnvSchema]) {
      expect(loadEnv(schema, { METRICS_HOST: "127.0.0.1" }).METRICS_HOST).toBe("127.0.0.1");
      expect(loadEnv(schema, { METRICS_HOST: "::1" }).METRICS_HOST).toBe("::1");
      expect(loadEnv(schema, {}).METRICS_HOST).toBeUndefined();
      expect(problems(schema, { METRICS_HOST: "http://x/" })).toEqual(['METRICS_HOST: expected an IP address or a host name, got "http://x/"']);
    }
  });

  it("refuses an empty step in WEBHOOK_RETRY_SCHEDULE instead of reading it as 0 seconds", () => {
    for (const bad of ["1,,3", "1,2,", ",1", "1, ,3", "1,-2"]) expect(problems(notifierEnvSchema, { WEBHOOK_RETRY_SCHEDULE: bad }), bad).toHaveLength(1);
    expect(loadEnv(notifierEnvSchema, { WEBHOOK_RETRY_SCHEDULE: "1, 0.5 ,3" }).WEBHOOK_RETRY_SCHEDULE).toEqual([1, 0.5, 3]);
  });

  it("refuses a REDIS_URL whose DB index is not one of Redis's DBs 0-15", () => {
    expect(problems(baseEnvSchema, { REDIS_URL: "redis://127.0.0.1:6379/abc" })).toEqual([
      'REDIS_URL: the DB index (the path) must be an integer from 0 to 15, got "redis://127.0.0.1:6379/abc"',
    ]);
    expect(problems(baseEnvSchema, { REDIS_URL: "redis://127.0.0.1:6379/99" })).toEqual([
      'REDIS_URL: DB index 99 is out of range: Redis has DBs 0 to 15, got "redis://127.0.0.1:6379/99"',
    ]);
    for (const bad of ["redis://h/-1", "redis://h/1.5", "redis://h/1e1", "http://h:6379/0", "127.0.0.1:6379"]) {
      expect(problems(baseEnvSchema, { REDIS_URL: bad }), bad).toHaveLength(1);
    }
    for (const good of ["redis://h:6379", "redis://h:6379/", "redis://h/0", "rediss://u:p@h:6380/15"]) {
      expect(loadEnv(baseEnvSchema, { REDIS_URL: good }).REDIS_URL, good).toBe(good);
    }
  });

  it("never repeats a secret or a URL's password back", () => {
    expect(problems(gatewayEnvSchema, { ADMIN_TOKEN: "short-secret" })).toEqual(["ADMIN_TOKEN: expected at least 16 characters, got (value withheld)"]);
    const [line] = problems(baseEnvSchema, { REDIS_URL: "redis://user:hunter2@h:6379/99" });
    expect(line).toContain('"redis://user:***@h:6379/99"');
    expect(line).not.toContain("hunter2");
  });
});

describe("loadEnvOrExit", () => {
  it("prints one line naming the program and every bad variable, and exits 1 without a stack", () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const exit = vi.spyOn(process, "exit").mockImplementation((code) => {
      throw new Error(`exit ${String(code)}`);
    });
    try {
      expect(() => loadEnvOrExit(gatewayEnvSchema, "tasklane-gateway", { PORT: "abc", LOG_LEVEL: "loud" })).toThrow("exit 1");
    } finally {
      write.mockRestore();
      exit.mockRestore();
    }
    expect(written).toEqual([
      'tasklane-gateway: invalid configuration: LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"; PORT: expected an integer from 0 to 65535, got "abc"\n',
    ]);
  });
});
