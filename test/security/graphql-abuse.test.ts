/**
 * Expensive and probing GraphQL documents against the gateway process in
 * production mode (NODE_ENV=production, INTROSPECTION unset): each is refused
 * before execution with BAD_USER_INPUT (so mutations inside wrote nothing),
 * and an internal failure reaches the client as a masked error with a request
 * id that finds the real error in the log.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/app-process.js";
import { httpToWs, openSubscription } from "../helpers/graphql-ws-client.js";
import { codeOf } from "../helpers/platform.js";
import { useAttackPlatform, type RawAnswer } from "./attack-platform.js";

const nested = (levels: number) => `${"tenant { ".repeat(1)}${"f { ".repeat(levels - 2)}x${" }".repeat(levels - 1)}`;
const aliases = (n: number, field: string) => Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(" ");
const SUBMIT = `submitTask(input: { type: "abuse" }) { id }`;

function refusedBeforeExecution(res: RawAnswer, message: RegExp | string): void {
  const errors = Array.isArray(res.json) ? undefined : res.json?.errors;
  expect(errors?.[0]?.extensions?.code, res.text.slice(0, 300)).toBe("BAD_USER_INPUT");
  expect(errors?.map((e) => e.message).join("\n")).toMatch(message);
  // Refused before execution: no data key at all, not even null fields.
  expect(Array.isArray(res.json) ? res.json : res.json?.data).toBeUndefined();
}

describe("security: GraphQL abuse", () => {
  const platform = useAttackPlatform();
  const key = () => platform.canaries.apiKey;

  it("refuses depth 20, in queries and in mutations, and runs nothing", async () => {
    const before = await platform.snapshot();
    refusedBeforeExecution(await platform.post({ query: `{ ${nested(20)} }` }, key()), /nested 20 levels deep; the limit is 12/);
    const mutation = `mutation { submitTask(input: { type: "deep" }) { ${"attemptHistory { ".repeat(1)}${"f { ".repeat(17)}x${" }".repeat(18)} } }`;
    refusedBeforeExecution(await platform.post({ query: mutation }, key()), /nested 20 levels deep/);
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses 1,000 aliases, of a query field and of a mutation, and runs nothing", async () => {
    const before = await platform.snapshot();
    refusedBeforeExecution(await platform.post({ query: `{ ${aliases(1000, "tenant { id }")} }` }, key()), /uses 1000 aliases; the limit is 200/);
    refusedBeforeExecution(await platform.post({ query: `mutation { ${aliases(1000, SUBMIT)} }` }, key()), /uses 1000 aliases/);
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses a task's payload or result aliased within one task, or selected past 16 times, over HTTP and WebSocket", async () => {
    refusedBeforeExecution(
      await platform.post({ query: `{ tasks(first: 500) { nodes { ${aliases(150, "payload")} } } }` }, key()),
      /Task.payload is selected under more than one name/,
    );
    refusedBeforeExecution(
      await platform.post({ query: `{ ${aliases(100, 'task(id: "task_x") { payload result }')} }` }, key()),
      /selects a task's payload or result 200 times; the limit is 16/,
    );
    // Eight single tasks, each body once: at the limit (tasks nobody has: the answers carry no canary).
    const fine = await platform.post({ query: `{ ${aliases(8, 'task(id: "task_x") { payload result }')} }` }, key());
    expect(Array.isArray(fine.json) ? undefined : fine.json?.errors).toBeUndefined();
    const sub = openSubscription(httpToWs(platform.url), `Bearer ${key()}`, `subscription { taskUpdated { task { ${aliases(20, "result")} } } }`);
    try {
      const deadline = Date.now() + 10_000;
      while (sub.errors.length === 0 && sub.closeEvent === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(sub.errors[0]?.extensions?.code).toBe("BAD_USER_INPUT");
      expect(sub.errors[0]?.message).toMatch(/Task.result is selected under more than one name/);
    } finally {
      await sub.close();
    }
  });

  it("refuses a batch of 500 operations whole, and runs none of them", async () => {
    const before = await platform.snapshot();
    const res = await platform.post(Array.from({ length: 500 }, () => ({ query: `mutation { ${SUBMIT} }` })), key());
    expect(res.status).toBe(400);
    refusedBeforeExecution(res, /between 1 and 20 operations/);
    expect(await platform.snapshot()).toEqual(before);
  });

  it("refuses the same documents over WebSocket: depth 20 and 1,000 aliases", async () => {
    const documents = {
      depth: [`subscription { taskUpdated { task { ${"f { ".repeat(17)}x${" }".repeat(17)} } } }`, /nested 20 levels deep/],
      aliases: [`subscription { taskUpdated { ${aliases(1000, "taskId")} } }`, /uses 1000 aliases/],
    } as const;
    for (const [label, [query, message]] of Object.entries(documents)) {
      const sub = openSubscription(httpToWs(platform.url), `Bearer ${key()}`, query);
      try {
        const deadline = Date.now() + 10_000;
        while (sub.errors.length === 0 && sub.closeEvent === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        expect({ label, code: sub.errors[0]?.extensions?.code, values: sub.values.length }).toEqual({ label, code: "BAD_USER_INPUT", values: 0 });
        expect(sub.errors.map((e) => e.message).join("\n")).toMatch(message);
      } finally {
        await sub.close();
      }
    }
  });

  it("refuses huge, overflowing and negative page sizes on every paged field", async () => {
    // Schedule.runs is only resolved when a schedule exists.
    const schedule = await platform.call(`mutation { createSchedule(input: { name: "paging", cron: "0 0 1 1 *", task: { type: "x" } }) { id } }`, {}, key());
    expect(schedule.errors).toBeUndefined();
    const fields = [
      `tasks(first: $n) { totalCount }`,
      `deadLetterTasks(first: $n) { totalCount }`,
      `workflows(first: $n) { id }`,
      `webhookDeliveries(first: $n) { id }`,
      `schedules { runs(first: $n) { id } }`,
    ];
    for (const field of fields) {
      for (const n of [2_147_483_647, 1_000_000, -1, 0]) {
        const res = await platform.call(`query ($n: Int) { ${field} }`, { n }, key());
        expect({ field, n, code: codeOf(res) }).toEqual({ field, n, code: "BAD_USER_INPUT" });
      }
      // Beyond 32 bits: refused by the page check or by GraphQL's Int, either way before execution.
      const overflow = await platform.post({ query: `query ($n: Int) { ${field} }`, variables: { n: 2 ** 31 } }, key());
      refusedBeforeExecution(overflow, /at most 500|32-bit signed integer/);
    }
  });

  it("refuses a document over 100 KB with 413 and a body over 8 MB with 413, over HTTP; and an oversized document over WebSocket", async () => {
    const bigDocument = await platform.post({ query: `{ tenant { id } } # ${"x".repeat(100 * 1024)}` }, key());
    expect(bigDocument.status).toBe(413);
    refusedBeforeExecution(bigDocument, /limited to 100 KB/);

    const before = await platform.snapshot();
    const bigBody = await platform.post({ query: `mutation ($p: JSON) { submitTask(input: { type: "big", payload: $p }) { id } }`, variables: { p: "x".repeat(9 * 1024 * 1024) } }, key());
    expect(bigBody.status).toBe(413);
    refusedBeforeExecution(bigBody, /Request body exceeds 8mb/);
    expect(await platform.snapshot()).toEqual(before);

    const sub = openSubscription(httpToWs(platform.url), `Bearer ${key()}`, `subscription { taskUpdated { taskId } } # ${"x".repeat(150 * 1024)}`);
    try {
      const deadline = Date.now() + 10_000;
      while (sub.errors.length === 0 && sub.closeEvent === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(sub.errors[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT" }, message: expect.stringContaining("limited to 100 KB") });
    } finally {
      await sub.close();
    }
  });

  it("has introspection off in production, over HTTP and WebSocket, even with a valid key", async () => {
    for (const query of [`{ __schema { types { name } } }`, `{ __type(name: "Task") { fields { name } } }`]) {
      const res = await platform.post({ query }, key());
      refusedBeforeExecution(res, /introspection/i);
    }
    // __typename is not introspection: clients add it everywhere.
    expect((await platform.call(`{ __typename }`, {}, key())).data).toEqual({ __typename: "Query" });
    const sub = openSubscription(httpToWs(platform.url), `Bearer ${key()}`, `subscription { __schema { types { name } } }`);
    try {
      const deadline = Date.now() + 10_000;
      while (sub.errors.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(sub.errors[0]).toMatchObject({ extensions: { code: "BAD_USER_INPUT" } });
    } finally {
      await sub.close();
    }
  });

  it("gives no field, argument, type or enum suggestions in production", async () => {
    const probes = [
      `{ tenant { nam } }`,
      `{ tasks(firts: 1) { totalCount } }`,
      `mutation { submitTask(input: { type: "x", priority: HIHG }) { id } }`,
      `mutation { submitTask(input: { typ: "x" }) { id } }`,
      `query ($f: TaskFiltr) { tasks(filter: $f) { totalCount } }`,
      `{ queus { name } }`,
    ];
    for (const query of probes) {
      const res = await platform.post({ query }, key());
      expect({ query, code: res.json?.errors?.[0]?.extensions?.code }).toEqual({ query, code: "BAD_USER_INPUT" });
      expect({ query, text: res.text }).not.toEqual({ query, text: expect.stringMatching(/Did you mean/) });
    }
  });

  it("masks an internal failure: no SQL, no stack, a request id that finds the real error in the log", async () => {
    const pool = platform.database.db.pool;
    await pool.query(`ALTER TABLE tasks RENAME TO tasks_hidden_by_security_test`);
    let answers: RawAnswer[];
    try {
      answers = [
        await platform.post({ query: `query ($id: ID!) { task(id: $id) { id } }`, variables: { id: "task_0190f0f0f0f07000800000000000000a" } }, key()),
        await platform.post({ query: `mutation ($p: JSON) { submitTask(input: { type: "x", payload: $p }) { id } }`, variables: { p: { canary: platform.canaries.payloadValue } } }, key()),
      ];
    } finally {
      await pool.query(`ALTER TABLE tasks_hidden_by_security_test RENAME TO tasks`);
    }
    for (const res of answers) {
      const requestId = res.headers.get("x-request-id");
      expect(requestId).toMatch(/\S{8,}/);
      expect(res.json?.errors).toEqual([expect.objectContaining({ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR", requestId } })]);
      expect(res.text).not.toMatch(/tasks_hidden|relation|select|insert|postgres|prisma|stack|\.js:\d+|at async/i);
      // The log line reaches us through the child's stdout pipe, possibly after the answer.
      const logged = await waitFor("the logged error", () =>
        platform
          .output("gateway")
          .split("\n")
          .find((line) => line.includes(String(requestId)) && line.includes('"level":50')),
      10_000, 50);
      expect(logged).toMatch(/tasks/);
    }
    expect(codeOf(await platform.call(`{ tasks { totalCount } }`, {}, key()))).toBeUndefined();
  });

  it("leaks none of the planted secrets into logs, metrics or error messages", async () => {
    expect(await platform.leaks()).toEqual([]);
  });
});
