import { baseEnvSchema, loadEnv } from "@tasklane/config";
import { EventEmitter } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { REDIS_ERROR_LOG_INTERVAL_MS, connectionLost, createRedis, logRedisErrors, redisTargetOf, watchConnection, type RedisClient } from "./connection.js";

describe("REDIS_SOCKET_TIMEOUT_SECONDS", () => {
  it("bounds every connection's wait for a reply, 10 s unless set", () => {
    const clientOf = (env: Record<string, string>) => createRedis(redisTargetOf(loadEnv(baseEnvSchema, env)), "test", { redis: { lazyConnect: true } });
    expect(clientOf({}).options.socketTimeout).toBe(10_000);
    expect(clientOf({ REDIS_SOCKET_TIMEOUT_SECONDS: "2.5" }).options.socketTimeout).toBe(2_500);
    expect(createRedis("redis://127.0.0.1:6379/0", "test", { redis: { lazyConnect: true } }).options.socketTimeout).toBe(10_000);
    expect(() => loadEnv(baseEnvSchema, { REDIS_SOCKET_TIMEOUT_SECONDS: "0" })).toThrow(/REDIS_SOCKET_TIMEOUT_SECONDS/);
  });
});

describe("REDIS_CLUSTER_NODES", () => {
  it("parses host:port seeds, IPv6 in brackets included", () => {
    const env = loadEnv(baseEnvSchema, { REDIS_CLUSTER_NODES: "127.0.0.1:7001, redis-b:7002,[::1]:7003" });
    expect(redisTargetOf(env)).toEqual({
      url: "redis://127.0.0.1:6379/0",
      clusterNodes: [
        { host: "127.0.0.1", port: 7001 },
        { host: "redis-b", port: 7002 },
        { host: "::1", port: 7003 },
      ],
      socketTimeoutMs: 10_000,
    });
    expect(redisTargetOf(loadEnv(baseEnvSchema, {})).clusterNodes).toBeUndefined();
  });

  it("refuses anything that is not host:port, naming the variable", () => {
    for (const bad of ["127.0.0.1", "127.0.0.1:7001,", "redis://127.0.0.1:7001", "a:b", "user@host:7001", "host:7001/1", "host:70000"]) {
      expect(() => loadEnv(baseEnvSchema, { REDIS_CLUSTER_NODES: bad }), bad).toThrow(/REDIS_CLUSTER_NODES/);
    }
  });

  it("refuses a REDIS_URL DB index other than 0, before connecting anywhere", () => {
    const target = { url: "redis://127.0.0.1:6379/3", clusterNodes: [{ host: "127.0.0.1", port: 7001 }] };
    expect(() => createRedis(target, "test")).toThrow(/DB 3/);
  });
});

describe("ioredis pipelines (patches/ioredis+6.0.0.patch)", () => {
  it("answer length from the prototype, not from an accessor defined on each pipeline", () => {
    // ioredis defined `length` on every Pipeline with a getter closing over it: each pipeline got a
    // map of its own, which lives in the old generation and reaches the pipeline through the getter,
    // so young-generation collections kept every pipeline (commands, arguments, replies) until the
    // next full collection.
    const redis = createRedis("redis://127.0.0.1:6379/0", "test", { redis: { lazyConnect: true } });
    try {
      const pipeline = redis.pipeline().set("a", "1").get("a");
      expect(Object.getOwnPropertyDescriptor(pipeline, "length")).toBeUndefined();
      expect(pipeline.length).toBe(2);
      expect(redis.multi().set("a", "1").length).toBe(2);
    } finally {
      redis.disconnect();
    }
  });
});

describe("logRedisErrors", () => {
  it("logs the first connection error, then one line per interval counting the rest, and the recovery", () => {
    const client = new EventEmitter();
    const lines: [string, Record<string, unknown>, string][] = [];
    const log = {
      warn: (obj: Record<string, unknown>, msg: string) => lines.push(["warn", obj, msg]),
      info: (obj: Record<string, unknown>, msg: string) => lines.push(["info", obj, msg]),
    };
    let now = 1_000_000;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => now);
    try {
      logRedisErrors(client as unknown as RedisClient, "tasklane-worker", log as never);
      const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6399"), { code: "ECONNREFUSED" });
      for (let i = 0; i < 10; i++) {
        client.emit("error", refused);
        now += 300;
      }
      now += REDIS_ERROR_LOG_INTERVAL_MS;
      client.emit("error", refused);
      client.emit("ready");
      client.emit("ready");
    } finally {
      clock.mockRestore();
    }
    expect(lines).toEqual([
      ["warn", { connection: "tasklane-worker", error: "connect ECONNREFUSED 127.0.0.1:6399", code: "ECONNREFUSED" }, "redis connection error"],
      ["warn", { connection: "tasklane-worker", error: "connect ECONNREFUSED 127.0.0.1:6399", code: "ECONNREFUSED", suppressed: 9 }, "redis connection error"],
      ["info", { connection: "tasklane-worker" }, "redis connection restored"],
    ]);
  });

  it("is attached by createRedis when given the app's logger", () => {
    const log = { warn: vi.fn(), info: vi.fn() };
    const redis = createRedis("redis://127.0.0.1:6379/0", "test", { log, redis: { lazyConnect: true } });
    try {
      expect(redis.listenerCount("error")).toBe(1);
      redis.emit("error", new Error("boom"));
      expect(log.warn).toHaveBeenCalledWith({ connection: "test", error: "boom" }, "redis connection error");
    } finally {
      redis.disconnect();
    }
  });
});

describe("connectionLost", () => {
  /** A client whose status the case moves, emitting the event ioredis emits for it. */
  function fakeClient(status: string) {
    const client = Object.assign(new EventEmitter(), { status });
    const move = (to: string) => {
      client.status = to;
      client.emit(to);
    };
    return { client: client as unknown as RedisClient, move };
  }

  it("waits for a first connection being made, but not for a reconnection, nor for one connected and not ready", () => {
    const { client, move } = fakeClient("connecting");
    watchConnection(client);
    expect(connectionLost(client)).toBe(false);
    // Connected, not ready: a round trip, or as long as a Redis loading its data takes (even at start-up).
    move("connect");
    expect(connectionLost(client)).toBe(true);
    move("ready");
    expect(connectionLost(client)).toBe(false);
    // Lost: every status but ready, also once connected again and still short of ready (a Redis loading its data).
    for (const status of ["close", "reconnecting", "connecting", "connect"]) {
      move(status);
      expect(connectionLost(client), status).toBe(true);
    }
    move("ready");
    expect(connectionLost(client)).toBe(false);
    move("end");
    expect(connectionLost(client)).toBe(true);
  });

  it("counts a first connection that failed as lost from then on", () => {
    const { client, move } = fakeClient("connecting");
    watchConnection(client);
    move("close");
    move("reconnecting");
    move("connecting");
    expect(connectionLost(client)).toBe(true);
  });

  it("is watched from birth by createRedis", () => {
    const redis = createRedis("redis://127.0.0.1:6379/0", "test", { redis: { lazyConnect: true } });
    try {
      expect(redis.status).toBe("wait");
      expect(connectionLost(redis)).toBe(false);
      redis.emit("close");
      expect(connectionLost(redis)).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});
