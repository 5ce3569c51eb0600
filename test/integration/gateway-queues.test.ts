/** upsertQueue (PUSH target policy), queue/queues, pause/resume and stats. */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";

const UPSERT = `mutation ($input: UpsertQueueInput!) {
  upsertQueue(input: $input) { name mode endpointUrl concurrency rateLimit { perSecond burst } paused }
}`;
const STATS = `query ($name: String!) {
  queue(name: $name) { name paused stats { scheduled queued running retrying dead succeeded oldestQueuedAgeSeconds } }
}`;

interface QueueView {
  name: string;
  mode: string;
  endpointUrl: string | null;
  concurrency: number | null;
  rateLimit: { perSecond: number; burst: number } | null;
  paused: boolean;
}

describe("gateway queues", () => {
  // The fixture's gateway refuses private targets (ALLOW_PRIVATE_TARGETS defaults to 0);
  // DNS is stubbed so "internal.example" resolves to a private address without a network.
  const platform = useGateway({
    deps: { resolver: async (host) => (host === "internal.example" ? ["10.1.2.3"] : ["93.184.215.14"]) },
  });

  it("refuses PUSH endpoints on private addresses unless ALLOW_PRIVATE_TARGETS=1", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    for (const endpointUrl of ["http://127.0.0.1:9000/hook", "http://10.0.0.8/x", "http://[::1]/x", "http://localhost:3000/", "http://169.254.169.254/latest", "http://internal.example/hook"]) {
      const res = await gql(platform.gateway.url, UPSERT, { input: { name: "push", mode: "PUSH", endpointUrl } }, apiKey);
      expect(codeOf(res), endpointUrl).toBe("BAD_USER_INPUT");
    }
    expect(codeOf(await gql(platform.gateway.url, `{ queue(name: "push") { name } }`, {}, apiKey))).toBeUndefined();
    const none = await gql<{ queue: unknown }>(platform.gateway.url, `{ queue(name: "push") { name } }`, {}, apiKey);
    expect(none.data?.queue).toBeNull();

    const permissive = await platform.startAnother({ env: { ALLOW_PRIVATE_TARGETS: "1" } });
    const ok = await gql<{ upsertQueue: QueueView }>(permissive.url, UPSERT, { input: { name: "push", mode: "PUSH", endpointUrl: "http://127.0.0.1:9000/hook" } }, apiKey);
    expect(ok.errors).toBeUndefined();
    expect(ok.data?.upsertQueue).toMatchObject({ name: "push", mode: "PUSH", endpointUrl: "http://127.0.0.1:9000/hook" });

    const publicOk = await gql(platform.gateway.url, UPSERT, { input: { name: "pub", mode: "PUSH", endpointUrl: "https://hooks.example.com/t" } }, apiKey);
    expect(publicOk.errors).toBeUndefined();
  });

  it("validates the PUSH/PULL shape", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const noUrl = await gql(platform.gateway.url, UPSERT, { input: { name: "p", mode: "PUSH" } }, apiKey);
    expect(codeOf(noUrl)).toBe("BAD_USER_INPUT");
    const badName = await gql(platform.gateway.url, UPSERT, { input: { name: "has space", mode: "PULL" } }, apiKey);
    expect(codeOf(badName)).toBe("BAD_USER_INPUT");
    const badMode = await gql(platform.gateway.url, UPSERT, { input: { name: "p", mode: "SIDEWAYS" } }, apiKey);
    expect(codeOf(badMode)).toBe("BAD_USER_INPUT");
  });

  it("keeps an existing PUSH queue's endpoint when an update leaves endpointUrl out; creating or switching to PUSH still needs one", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const url = platform.gateway.url;
    expect(codeOf(await gql(url, UPSERT, { input: { name: "p", mode: "PUSH", concurrency: 2 } }, apiKey))).toBe("BAD_USER_INPUT");
    await gql(url, UPSERT, { input: { name: "p", mode: "PUSH", endpointUrl: "https://hooks.example.com/p" } }, apiKey);
    const updated = await gql<{ upsertQueue: QueueView }>(url, UPSERT, { input: { name: "p", mode: "PUSH", concurrency: 3 } }, apiKey);
    expect(updated.errors).toBeUndefined();
    expect(updated.data?.upsertQueue).toMatchObject({ mode: "PUSH", endpointUrl: "https://hooks.example.com/p", concurrency: 3 });
    const nulled = await gql<{ upsertQueue: QueueView }>(url, UPSERT, { input: { name: "p", mode: "PUSH", endpointUrl: null, paused: true } }, apiKey);
    expect(nulled.data?.upsertQueue).toMatchObject({ endpointUrl: "https://hooks.example.com/p", paused: true });

    await gql(url, UPSERT, { input: { name: "p", mode: "PULL" } }, apiKey);
    const switched = await gql(url, UPSERT, { input: { name: "p", mode: "PUSH" } }, apiKey);
    expect(codeOf(switched)).toBe("BAD_USER_INPUT");
    expect(JSON.stringify(switched.errors)).toContain("endpointUrl");
  });

  it("creates and updates by name, leaving omitted fields as they are; mode may switch", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const created = await gql<{ upsertQueue: QueueView }>(
      platform.gateway.url,
      UPSERT,
      { input: { name: "emails", mode: "PUSH", endpointUrl: "https://hooks.example.com/e", concurrency: 5, rateLimit: { perSecond: 2.5 } } },
      apiKey,
    );
    expect(created.data?.upsertQueue).toEqual({
      name: "emails",
      mode: "PUSH",
      endpointUrl: "https://hooks.example.com/e",
      concurrency: 5,
      rateLimit: { perSecond: 2.5, burst: 3 },
      paused: false,
    });
    const updated = await gql<{ upsertQueue: QueueView }>(platform.gateway.url, UPSERT, { input: { name: "emails", mode: "PULL", paused: true } }, apiKey);
    expect(updated.data?.upsertQueue).toEqual({ name: "emails", mode: "PULL", endpointUrl: null, concurrency: 5, rateLimit: { perSecond: 2.5, burst: 3 }, paused: true });

    const list = await gql<{ queues: Array<{ name: string }> }>(platform.gateway.url, `{ queues { name } }`, {}, apiKey);
    expect(list.data?.queues.map((q) => q.name)).toEqual(["default", "emails"]);
  });

  it("removeLimits takes a queue's limits away, and only those named; naming one that is also set changes nothing", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const upsert = (input: Record<string, unknown>) => gql<{ upsertQueue: QueueView }>(platform.gateway.url, UPSERT, { input: { name: "limited", mode: "PULL", ...input } }, apiKey);
    await upsert({ concurrency: 3, rateLimit: { perSecond: 5, burst: 7 } });
    // Null leaves a limit as it is.
    expect((await upsert({ concurrency: null, rateLimit: null })).data?.upsertQueue).toMatchObject({ concurrency: 3, rateLimit: { perSecond: 5, burst: 7 } });

    const both = await upsert({ concurrency: 4, removeLimits: ["CONCURRENCY"] });
    expect(codeOf(both)).toBe("BAD_USER_INPUT");
    expect((await upsert({ removeLimits: ["CONCURRENCY"] })).data?.upsertQueue).toMatchObject({ concurrency: null, rateLimit: { perSecond: 5, burst: 7 } });
    expect((await upsert({ removeLimits: ["RATE_LIMIT"] })).data?.upsertQueue).toMatchObject({ concurrency: null, rateLimit: null });
    const stored = await platform.database.db.pool.query(`SELECT concurrency, rate_limit_per_second, rate_limit_burst FROM queues WHERE name = 'limited'`);
    expect(stored.rows).toEqual([{ concurrency: null, rate_limit_per_second: null, rate_limit_burst: null }]);
  });

  it("pauses and resumes; an unknown queue is NOT_FOUND for mutations and null for queue()", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const paused = await gql<{ pauseQueue: { name: string; paused: boolean } }>(platform.gateway.url, `mutation { pauseQueue(name: "default") { name paused } }`, {}, apiKey);
    expect(paused.data?.pauseQueue).toEqual({ name: "default", paused: true });
    const resumed = await gql<{ resumeQueue: { paused: boolean } }>(platform.gateway.url, `mutation { resumeQueue(name: "default") { paused } }`, {}, apiKey);
    expect(resumed.data?.resumeQueue.paused).toBe(false);
    expect(codeOf(await gql(platform.gateway.url, `mutation { pauseQueue(name: "nope") { name } }`, {}, apiKey))).toBe("NOT_FOUND");
    const missing = await gql<{ queue: unknown }>(platform.gateway.url, `{ queue(name: "nope") { name } }`, {}, apiKey);
    expect(missing.errors).toBeUndefined();
    expect(missing.data?.queue).toBeNull();
  });

  it("refuses a name no queue could have with BAD_USER_INPUT naming the argument, as task(id: \"\") does", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const task = await gql(platform.gateway.url, `{ task(id: "") { id } }`, {}, apiKey);
    expect(codeOf(task)).toBe("BAD_USER_INPUT");
    for (const name of ["", "has space", "x".repeat(65)]) {
      const res = await gql<{ queue: unknown }>(platform.gateway.url, `query ($n: String!) { queue(name: $n) { name } }`, { n: name }, apiKey);
      expect(codeOf(res), JSON.stringify(name)).toBe("BAD_USER_INPUT");
      const fieldErrors = (res.errors?.[0]?.extensions?.fieldErrors ?? []) as Array<{ path: string }>;
      expect(fieldErrors.map((f) => f.path), JSON.stringify(name)).toEqual(["name"]);
    }
  });

  it("does not show or touch another tenant's queues", async () => {
    const a = await createTenant(platform.gateway);
    const b = await createTenant(platform.gateway);
    await gql(platform.gateway.url, UPSERT, { input: { name: "secret-q", mode: "PULL" } }, b.apiKey);
    const seen = await gql<{ queue: unknown }>(platform.gateway.url, `{ queue(name: "secret-q") { name } }`, {}, a.apiKey);
    expect(seen.data?.queue).toBeNull();
    expect(codeOf(await gql(platform.gateway.url, `mutation { pauseQueue(name: "secret-q") { name } }`, {}, a.apiKey))).toBe("NOT_FOUND");
  });

  it("counts tasks per status in stats, with the age of the oldest due QUEUED task", async () => {
    const { tenantId, apiKey } = await createTenant(platform.gateway);
    const pool = platform.database.db.pool;
    const queue = await pool.query<{ id: string }>(`SELECT id FROM queues WHERE tenant_id = $1 AND name = 'default'`, [tenantId]);
    const queueId = queue.rows[0]?.id;
    const insert = (status: string, runAtSql: string) =>
      pool.query(
        `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, max_attempts, backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
         VALUES ('task_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, 't', $3::"TaskStatus", ${runAtSql}, 3, 'EXPONENTIAL', 1, false, 30)`,
        [tenantId, queueId, status],
      );
    await insert("QUEUED", "now() - interval '30 seconds'");
    await insert("QUEUED", "now() - interval '5 seconds'");
    await insert("QUEUED", "now() + interval '1 hour'"); // not due: does not count for the age
    await insert("SCHEDULED", "now() + interval '1 hour'");
    await insert("DEAD", "now()");
    await insert("SUCCEEDED", "now()");
    await insert("SUCCEEDED", "now()");
    const res = await gql<{ queue: { stats: Record<string, number | null> } }>(platform.gateway.url, STATS, { name: "default" }, apiKey);
    expect(res.errors).toBeUndefined();
    const stats = res.data?.queue.stats;
    expect(stats).toMatchObject({ scheduled: 1, queued: 3, running: 0, retrying: 0, dead: 1, succeeded: 2 });
    expect(stats?.oldestQueuedAgeSeconds).toBeGreaterThanOrEqual(29);
    expect(stats?.oldestQueuedAgeSeconds).toBeLessThan(60);

    const empty = await gql<{ queues: Array<{ name: string; stats: Record<string, number | null> }> }>(
      platform.gateway.url,
      `{ queues { name stats { queued oldestQueuedAgeSeconds } } }`,
      {},
      (await createTenant(platform.gateway)).apiKey,
    );
    expect(empty.data?.queues).toEqual([{ name: "default", stats: { queued: 0, oldestQueuedAgeSeconds: null } }]);
  });
});
