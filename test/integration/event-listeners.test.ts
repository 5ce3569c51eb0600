/**
 * The registry of tenants with live task-event subscribers, on real Redis:
 * marks hold for their TTL by Redis's clock and then drop out (and out of
 * the key), a shorter refresh never cuts another gateway's longer mark, and
 * a tenant marked for the first time is announced (the relay's wake-up).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Redis } from "ioredis";
import { EventListenerRegistry, createKeySpace, createRedis } from "@tasklane/queue";
import { waitFor } from "../helpers/app-process.js";
import { createTestRedis, type TestRedis } from "../helpers/platform.js";

let testRedis: TestRedis;
let redis: Redis;

beforeAll(() => {
  testRedis = createTestRedis();
  redis = createRedis(testRedis.url, "test-event-listeners");
});

afterAll(async () => {
  redis?.disconnect();
  await testRedis?.cleanup();
});

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

describe("EventListenerRegistry", () => {
  it("answers the tenants marked, until their marks lapse; lapsed marks leave the key", async () => {
    const keys = createKeySpace(`${testRedis.prefix}a`);
    const short = new EventListenerRegistry(redis, keys, 300);
    expect(await short.listening()).toEqual(new Set());
    await short.register(["ten_a", "ten_b"]);
    expect(await short.listening()).toEqual(new Set(["ten_a", "ten_b"]));
    await sleep(600);
    expect(await short.listening()).toEqual(new Set());
    expect(await redis.zcard(keys.eventListeners)).toBe(0);
  });

  it("keeps the later expiry when gateways mark the same tenant with different lengths", async () => {
    const keys = createKeySpace(`${testRedis.prefix}b`);
    const long = new EventListenerRegistry(redis, keys, 60_000);
    const short = new EventListenerRegistry(redis, keys, 200);
    await long.register(["ten_a"]);
    await short.register(["ten_a", "ten_c"]);
    await sleep(500);
    expect(await short.listening()).toEqual(new Set(["ten_a"]));
  });

  it("marks nothing for an empty list, and keys one deployment apart from another", async () => {
    const mine = new EventListenerRegistry(redis, createKeySpace(`${testRedis.prefix}c`), 60_000);
    const other = new EventListenerRegistry(redis, createKeySpace(`${testRedis.prefix}d`), 60_000);
    await mine.register([]);
    await other.register(["ten_x"]);
    expect(await mine.listening()).toEqual(new Set());
    expect(await other.listening()).toEqual(new Set(["ten_x"]));
  });

  it("announces a tenant marked for the first time, not a refresh of a live mark", async () => {
    const keys = createKeySpace(`${testRedis.prefix}e`);
    const registry = new EventListenerRegistry(redis, keys, 60_000);
    const subscriber = createRedis(testRedis.url, "test-event-listeners-sub");
    const heard: number[] = [];
    try {
      const unsubscribe = await EventListenerRegistry.onNewListeners(subscriber, keys, () => heard.push(Date.now()));
      expect(await registry.register(["ten_a"])).toBe(1);
      expect(await registry.register(["ten_a"])).toBe(0);
      expect(await registry.register(["ten_a", "ten_b", "ten_c"])).toBe(2);
      // Another deployment's marks are not announced here.
      await new EventListenerRegistry(redis, createKeySpace(`${testRedis.prefix}f`), 60_000).register(["ten_z"]);
      await waitFor("two announcements", () => heard.length >= 2, 5_000);
      await sleep(200);
      expect(heard).toHaveLength(2);
      await unsubscribe();
      await registry.register(["ten_d"]);
      await sleep(200);
      expect(heard).toHaveLength(2);
    } finally {
      subscriber.disconnect();
    }
  });
});
