/**
 * Task operations through the gateway (storage is packages/db's), and the
 * graphql-ws transport (connection auth, operations, errors).
 */
import { createClient } from "graphql-ws";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, type GqlError } from "../helpers/platform.js";

const TASK_FIELDS = `id type queue payload status priority runAt createdAt attempts maxAttempts idempotencyKey cancelRequested attemptHistory { number outcome }`;
const SUBMIT = `mutation ($input: SubmitTaskInput!) { submitTask(input: $input) { ${TASK_FIELDS} } }`;

interface TaskView {
  id: string;
  type: string;
  queue: string;
  payload: unknown;
  status: string;
  priority: string;
  runAt: string;
  createdAt: string;
  attempts: number;
  maxAttempts: number;
  idempotencyKey: string | null;
  cancelRequested: boolean;
  attemptHistory: unknown[];
}

describe("gateway tasks", () => {
  const platform = useGateway();

  it("submits, reads and lists tasks of the caller's tenant only", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await gql<{ submitTask: TaskView }>(platform.gateway.url, SUBMIT, { input: { type: "email.send", payload: { to: "a@b.c" }, runAt, priority: "HIGH" } }, apiKey);
    expect(res.errors).toBeUndefined();
    const task = res.data?.submitTask;
    expect(task).toMatchObject({ type: "email.send", queue: "default", payload: { to: "a@b.c" }, status: "SCHEDULED", priority: "HIGH", runAt, attempts: 0, maxAttempts: 3, attemptHistory: [] });
    expect(task?.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);

    const read = await gql<{ task: TaskView | null }>(platform.gateway.url, `query ($id: ID!) { task(id: $id) { id status } }`, { id: task?.id }, apiKey);
    expect(read.data?.task).toEqual({ id: task?.id, status: "SCHEDULED" });

    const other = await createTenant(platform.gateway);
    const foreign = await gql<{ task: TaskView | null }>(platform.gateway.url, `query ($id: ID!) { task(id: $id) { id } }`, { id: task?.id }, other.apiKey);
    expect(foreign.errors).toBeUndefined();
    expect(foreign.data?.task).toBeNull();

    const batch = await gql<{ submitTasks: Array<{ type: string }> }>(
      platform.gateway.url,
      `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { type } }`,
      { inputs: Array.from({ length: 25 }, (_, i) => ({ type: `t${i}` })) },
      apiKey,
    );
    expect(batch.data?.submitTasks.map((t) => t.type)).toEqual(Array.from({ length: 25 }, (_, i) => `t${i}`));

    const page = await gql<{ tasks: { nodes: Array<{ type: string }>; pageInfo: { hasNextPage: boolean; endCursor: string | null }; totalCount: number } }>(
      platform.gateway.url,
      `{ tasks(first: 10, filter: { status: [QUEUED] }) { nodes { type attemptHistory { number } } pageInfo { hasNextPage endCursor } totalCount } }`,
      {},
      apiKey,
    );
    expect(page.errors).toBeUndefined();
    expect(page.data?.tasks.totalCount).toBe(25);
    expect(page.data?.tasks.nodes).toHaveLength(10);
    expect(page.data?.tasks.pageInfo.hasNextPage).toBe(true);

    const next = await gql<{ tasks: { nodes: Array<{ type: string }> } }>(
      platform.gateway.url,
      `query ($after: String) { tasks(first: 10, filter: { status: [QUEUED] }, after: $after) { nodes { type } } }`,
      { after: page.data?.tasks.pageInfo.endCursor },
      apiKey,
    );
    expect(next.data?.tasks.nodes.map((t) => t.type)).toEqual(Array.from({ length: 10 }, (_, i) => `t${14 - i}`));
  });

  it("refuses a cursor it did not hand out, on every list, instead of answering an empty or a first page", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const submitted = await gql<{ submitTask: { id: string } }>(platform.gateway.url, `mutation { submitTask(input: { type: "c" }) { id } }`, {}, apiKey);
    const taskId = submitted.data!.submitTask.id;
    const cursorOfId = Buffer.from(taskId).toString("base64url");
    for (const [query, after] of [
      [`query ($after: String) { tasks(after: $after) { totalCount } }`, "garbage"],
      [`query ($after: String) { tasks(after: $after) { totalCount } }`, taskId],
      [`query ($after: String) { deadLetterTasks(after: $after) { totalCount } }`, "garbage"],
      [`query ($after: String) { workflows(after: $after) { id } }`, "garbage"],
      [`query ($id: ID!, $after: String) { task(id: $id) { events(after: $after) { id } } }`, "garbage"],
      // Past Postgres's bigint: it reached the database as INTERNAL_SERVER_ERROR.
      [`query ($id: ID!, $after: String) { task(id: $id) { events(after: $after) { id } } }`, "9999999999999999999"],
    ] as const) {
      const res = await gql(platform.gateway.url, query, { after, id: taskId }, apiKey);
      expect({ query, after, code: codeOf(res) }).toEqual({ query, after, code: "BAD_USER_INPUT" });
    }
    const fine = await gql<{ tasks: { totalCount: number; nodes: unknown[] } }>(
      platform.gateway.url,
      `query ($after: String) { tasks(after: $after) { totalCount nodes { id } } }`,
      { after: cursorOfId },
      apiKey,
    );
    expect(fine.data?.tasks).toEqual({ totalCount: 1, nodes: [] });
  });

  it("accepts 1,000 inputs in one submitTasks call and keeps their order", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const inputs = Array.from({ length: 1000 }, (_, i) => ({ type: "bulk", payload: { i, pad: "x".repeat(2000) } }));
    const res = await gql<{ submitTasks: Array<{ payload: { i: number } }> }>(
      platform.gateway.url,
      `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { payload } }`,
      { inputs },
      apiKey,
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.submitTasks.map((t) => t.payload.i)).toEqual(inputs.map((_, i) => i));
    const tooMany = await gql(platform.gateway.url, `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { id } }`, { inputs: [...inputs, { type: "one-too-many" }] }, apiKey);
    expect(codeOf(tooMany)).toBe("BAD_USER_INPUT");
  });

  it("refuses an unknown queue (NOT_FOUND), bad input (BAD_USER_INPUT) and private callbacks", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    expect(codeOf(await gql(platform.gateway.url, SUBMIT, { input: { type: "x", queue: "missing" } }, apiKey))).toBe("NOT_FOUND");
    const bad = await gql(platform.gateway.url, SUBMIT, { input: { type: "", maxAttempts: 0 } }, apiKey);
    expect(codeOf(bad)).toBe("BAD_USER_INPUT");
    expect(bad.errors?.[0]?.extensions?.fieldErrors).toEqual(expect.arrayContaining([expect.objectContaining({ path: "maxAttempts" })]));
    const callback = await gql(platform.gateway.url, SUBMIT, { input: { type: "x", callbackUrl: "http://127.0.0.1/cb" } }, apiKey);
    expect(codeOf(callback)).toBe("BAD_USER_INPUT");
    const count = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM tasks t JOIN api_keys k ON k.tenant_id = t.tenant_id WHERE k.prefix = $1`, [apiKey.slice(0, 11)]);
    expect(count.rows[0].n).toBe(0);
  });

  it("answers each of 60 concurrent single submissions on its own, whether or not they were merged into one insert", async () => {
    const { apiKey, tenantId } = await createTenant(platform.gateway);
    // 4 name an unknown queue; 10 pairs share an idempotency key; the rest are plain.
    const inputs = Array.from({ length: 60 }, (_, i) => ({
      type: `c${i}`,
      ...(i < 40 && i % 10 === 7 ? { queue: "missing" } : {}),
      ...(i >= 40 ? { idempotencyKey: `pair-${i % 10}` } : {}),
    }));
    const answers = await Promise.all(inputs.map((input) => gql<{ submitTask: { id: string; type: string } }>(platform.gateway.url, SUBMIT, { input }, apiKey)));
    answers.forEach((answer, i) => {
      if (i < 40 && i % 10 === 7) expect(codeOf(answer)).toBe("NOT_FOUND");
      else {
        expect(answer.errors).toBeUndefined();
        // A repeated key answers with the first task of that key, so its type may be the twin's.
        if (i < 40) expect(answer.data?.submitTask.type).toBe(`c${i}`);
      }
    });
    const idOf = (i: number) => answers[i]?.data?.submitTask.id;
    for (let k = 0; k < 10; k++) expect(idOf(40 + k)).toBe(idOf(50 + k));
    const rows = await platform.database.db.pool.query(`SELECT count(*)::int AS n FROM tasks WHERE tenant_id = $1`, [tenantId]);
    expect(rows.rows[0].n).toBe(60 - 4 - 10);
    const ids = answers.flatMap((a) => (a.data ? [a.data.submitTask.id] : []));
    expect(new Set(ids).size).toBe(60 - 4 - 10);

    // Batches too: each of 30 concurrent submitTasks calls gets exactly its own tasks, in its order.
    const base = Math.floor(Date.now() / 1000) * 1000 + 86_400_000;
    const runAtOf = (r: number, k: number) => new Date(base + r * 60_000 + k * 1000).toISOString();
    const batches = await Promise.all(
      Array.from({ length: 30 }, (_, r) =>
        gql<{ submitTasks: Array<{ type: string; runAt: string }> }>(
          platform.gateway.url,
          `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { type runAt } }`,
          { inputs: [0, 1, 2].map((k) => ({ type: `r${r}-${k}`, runAt: runAtOf(r, k) })) },
          apiKey,
        ),
      ),
    );
    expect(batches.map((b) => b.errors?.[0]?.message).filter(Boolean)).toEqual([]);
    batches.forEach((b, r) => {
      expect(b.data?.submitTasks.map((t) => t.type)).toEqual([0, 1, 2].map((k) => `r${r}-${k}`));
      expect(b.data?.submitTasks.map((t) => t.runAt)).toEqual([0, 1, 2].map((k) => runAtOf(r, k)));
    });
  });

  it("answers submissions that ask only for ids with the same tasks, beside concurrent whole-task submissions", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const IDS = `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { __typename ...I } } fragment I on Task { id }`;
    const WHOLE = `mutation ($inputs: [SubmitTaskInput!]!) { submitTasks(inputs: $inputs) { id type } }`;
    const calls = Array.from({ length: 20 }, (_, r) => {
      const inputs = [{ type: `r${r}-a` }, { type: `r${r}-b`, idempotencyKey: `key-${r % 5}` }];
      return gql<{ submitTasks: Array<{ id: string; __typename?: string; type?: string }> }>(platform.gateway.url, r % 2 ? WHOLE : IDS, { inputs }, apiKey);
    });
    const answers = await Promise.all(calls);
    expect(answers.map((a) => a.errors?.[0]?.message).filter(Boolean)).toEqual([]);
    const byId = async (id: string) =>
      (await gql<{ task: { type: string } | null }>(platform.gateway.url, `query ($id: ID!) { task(id: $id) { type } }`, { id }, apiKey)).data?.task?.type;
    for (const [r, answer] of answers.entries()) {
      const tasks = answer.data?.submitTasks ?? [];
      expect(tasks).toHaveLength(2);
      if (r % 2 === 0) expect(tasks.map((t) => Object.keys(t).sort())).toEqual([["__typename", "id"], ["__typename", "id"]]);
      expect(await byId(tasks[0]?.id ?? "")).toBe(`r${r}-a`);
    }
    // Calls sharing an idempotency key answer the one task of that key, whichever shape they asked for.
    for (let k = 0; k < 5; k++) {
      const ids = new Set(answers.filter((_, r) => r % 5 === k).map((a) => a.data?.submitTasks[1]?.id));
      expect(ids.size).toBe(1);
      expect(await byId([...ids][0] ?? "")).toMatch(new RegExp(`^r(${k}|${k + 5}|${k + 10}|${k + 15})-b$`));
    }
  });

  it("cancels a pending task; cancelling it again is CONFLICT", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const submitted = await gql<{ submitTask: TaskView }>(platform.gateway.url, SUBMIT, { input: { type: "x", delaySeconds: 600 } }, apiKey);
    const id = submitted.data?.submitTask.id;
    const cancel = `mutation ($id: ID!) { cancelTask(id: $id) { id status } }`;
    const first = await gql<{ cancelTask: { status: string } }>(platform.gateway.url, cancel, { id }, apiKey);
    expect(first.data?.cancelTask.status).toBe("CANCELLED");
    expect(codeOf(await gql(platform.gateway.url, cancel, { id }, apiKey))).toBe("CONFLICT");
    const dead = await gql<{ deadLetterTasks: { totalCount: number } }>(platform.gateway.url, `{ deadLetterTasks { totalCount } }`, {}, apiKey);
    expect(dead.data?.deadLetterTasks.totalCount).toBe(0);
  });

  it("serves graphql-ws on /graphql with connectionParams auth", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const run = async (query: string, authorization?: string) => {
      const client = createClient({
        url: platform.gateway.url.replace("http://", "ws://"),
        webSocketImpl: WebSocket,
        connectionParams: authorization ? { authorization } : {},
        retryAttempts: 0,
      });
      try {
        return await new Promise<{ data?: unknown; errors?: readonly GqlError[] }>((resolve, reject) => {
          let last: { data?: unknown; errors?: readonly GqlError[] } = {};
          client.subscribe<unknown>({ query }, {
            next: (value) => {
              last = value as typeof last;
            },
            error: (error: unknown) => (Array.isArray(error) ? resolve({ errors: error as GqlError[] }) : reject(error)),
            complete: () => resolve(last),
          });
        });
      } finally {
        await client.dispose();
      }
    };
    expect(await run(`{ tenant { name } }`, `Bearer ${apiKey}`)).toMatchObject({ data: { tenant: { name: expect.any(String) } } });
    // A subscription that cannot start answers once and completes (live ones are in realtime-subscriptions.test.ts).
    const sub = await run(`subscription { taskUpdated(queue: "no-such-queue") { taskId status } }`, `Bearer ${apiKey}`);
    expect(sub.errors?.[0]).toMatchObject({ message: 'Queue "no-such-queue" not found', extensions: { code: "NOT_FOUND" } });
    // No valid credential: the connection itself is refused with a reason.
    await expect(run(`subscription { taskUpdated { taskId } }`)).rejects.toMatchObject({ code: 4401, reason: "Unauthorized" });
    const invalid = await run(`subscription { nope }`, `Bearer ${apiKey}`);
    expect(invalid.errors?.[0]?.extensions?.code).toBe("BAD_USER_INPUT");
  });
});
