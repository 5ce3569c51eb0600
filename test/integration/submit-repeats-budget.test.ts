/**
 * submitTasks answers an input repeating an idempotency key with the task it
 * names, read back whole. Those reads come out of the answer's 4 MiB of
 * payloads and results (core's answer-budget.ts): a request of a few KiB
 * repeating 1,000 keys of 256 KiB tasks read 256 MB into the gateway. Past
 * the budget, in input order, a repeated task's payload answers null with a
 * BAD_USER_INPUT (reason ANSWER_BODY_BYTES) error; new tasks' bodies, the
 * request's own, are never withheld. The payloads compress to almost nothing
 * in Postgres: the bound is on what the gateway holds.
 */
import { ANSWER_BODY_BYTES, ErrorCode } from "@tasklane/core";
import { TasklaneClient } from "@tasklane/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql, type GqlError } from "../helpers/platform.js";

const BLOB = "x".repeat(200 * 1024);
/** Bodies of 200 KiB that fit in 4 MiB. */
const FIT = Math.floor(ANSWER_BODY_BYTES / BLOB.length);
const KEPT = 30;

interface Node {
  id: string;
  idempotencyKey: string | null;
  payload: { blob: string; n: number } | null;
}

const SUBMIT = `mutation ($in: [SubmitTaskInput!]!) { submitTasks(inputs: $in) { id idempotencyKey payload } }`;

describe("submitTasks' repeated keys bounded per answer", () => {
  const platform = useGateway();
  let apiKey = "";
  const submit = (inputs: unknown[]) => gql<{ submitTasks: Node[] }>(platform.gateway.url, SUBMIT, { in: inputs }, apiKey);
  const original = new Map<string, string>();

  /** The inputs' payloads withheld: each a BAD_USER_INPUT error on that input's payload. */
  const expectWithheldAt = (errors: GqlError[] | undefined, nodes: Node[]) => {
    const withheld = nodes.flatMap((n, i) => (n.payload === null ? [i] : []));
    expect((errors ?? []).map((e) => e.path)).toEqual(withheld.map((i) => ["submitTasks", i, "payload"]));
    for (const error of errors ?? []) {
      expect(error.extensions?.code).toBe(ErrorCode.BAD_USER_INPUT);
      expect(error.extensions?.reason).toBe("ANSWER_BODY_BYTES");
    }
    return withheld;
  };

  beforeAll(async () => {
    ({ apiKey } = await createTenant(platform.gateway, "repeats", { maxPendingTasks: 1_000, apiRatePerSecond: 1_000, apiBurst: 1_000 }));
    for (let i = 0; i < KEPT; i += 10) {
      const inputs = Array.from({ length: 10 }, (_, k) => ({ type: "big", idempotencyKey: `k${i + k}`, payload: { blob: BLOB, n: i + k } }));
      const res = await submit(inputs);
      expect(res.errors).toBeUndefined();
      for (const t of res.data?.submitTasks ?? []) original.set(t.idempotencyKey as string, t.id);
    }
    expect(original.size).toBe(KEPT);
  });

  it("withholds repeated tasks' payloads past 4 MiB in input order; each is still answered and readable with task(id)", async () => {
    // Tiny inputs naming the big tasks: the answer is the stored tasks.
    const inputs = Array.from({ length: KEPT }, (_, n) => ({ type: "big", idempotencyKey: `k${n}` }));
    // Twice: the gateway interprets an operation's first run and runs it compiled (graphql-jit) after.
    for (let run = 0; run < 2; run++) {
      const res = await submit(inputs);
      const nodes = res.data?.submitTasks ?? [];
      expect(nodes.map((t) => t.id)).toEqual(inputs.map((i) => original.get(i.idempotencyKey)));
      const withheld = expectWithheldAt(res.errors, nodes);
      // The first FIT or so whole, every one after withheld.
      const kept = nodes.length - withheld.length;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThanOrEqual(FIT);
      expect(withheld).toEqual(Array.from({ length: withheld.length }, (_, k) => kept + k));
      expect(nodes.slice(0, kept).every((t, n) => t.payload?.blob === BLOB && t.payload.n === n)).toBe(true);
      const byId = await gql<{ task: Node }>(platform.gateway.url, `query ($id: ID!) { task(id: $id) { id payload } }`, { id: nodes.at(-1)?.id }, apiKey);
      expect(byId.data?.task.payload?.n).toBe(KEPT - 1);
    }
  });

  it("never withholds new tasks' payloads, which the request carried: they spend none of the 4 MiB", async () => {
    // New tasks past the budget, after the repeats in input order.
    const inputs = [
      ...Array.from({ length: KEPT }, (_, n) => ({ type: "big", idempotencyKey: `k${n}` })),
      ...Array.from({ length: 5 }, (_, n) => ({ type: "big", idempotencyKey: `new-${n}`, payload: { blob: BLOB, n: 100 + n } })),
    ];
    const res = await submit(inputs);
    const nodes = res.data?.submitTasks ?? [];
    expect(nodes).toHaveLength(KEPT + 5);
    const withheld = expectWithheldAt(res.errors, nodes);
    expect(withheld.length).toBeGreaterThan(0);
    expect(withheld.every((i) => i < KEPT)).toBe(true);
    expect(nodes.slice(KEPT).map((t) => t.payload?.n)).toEqual([100, 101, 102, 103, 104]);
    expect(nodes.slice(KEPT).every((t) => t.payload?.blob === BLOB)).toBe(true);
  });

  it("aliased submissions share the answer's 4 MiB", async () => {
    const inputs = Array.from({ length: FIT }, (_, n) => ({ type: "big", idempotencyKey: `k${n}` }));
    const res = await gql<{ a: Node[]; b: Node[] }>(
      platform.gateway.url,
      `mutation ($in: [SubmitTaskInput!]!) { a: submitTasks(inputs: $in) { id payload } b: submitTasks(inputs: $in) { id payload } }`,
      { in: inputs },
      apiKey,
    );
    const kept = [...(res.data?.a ?? []), ...(res.data?.b ?? [])].filter((t) => t.payload !== null);
    expect(res.data?.a).toHaveLength(FIT);
    expect(res.data?.b).toHaveLength(FIT);
    expect(kept.length).toBeLessThanOrEqual(FIT);
    expect(res.errors?.length).toBe(2 * FIT - kept.length);
  });

  it("answers an id-only submission of the repeats without errors, and the SDK's submitMany with every payload whole", async () => {
    const inputs = Array.from({ length: KEPT }, (_, n) => ({ type: "big", idempotencyKey: `k${n}` }));
    const ids = await gql<{ submitTasks: Array<{ id: string }> }>(
      platform.gateway.url,
      `mutation ($in: [SubmitTaskInput!]!) { submitTasks(inputs: $in) { id } }`,
      { in: inputs },
      apiKey,
    );
    expect(ids.errors).toBeUndefined();
    expect(ids.data?.submitTasks.map((t) => t.id)).toEqual(inputs.map((i) => original.get(i.idempotencyKey)));

    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const tasks = await client.tasks.submitMany(inputs);
    expect(tasks.map((t) => t.id)).toEqual(inputs.map((i) => original.get(i.idempotencyKey)));
    expect(tasks.every((t, n) => (t.payload as { blob: string; n: number }).blob === BLOB && (t.payload as { n: number }).n === n)).toBe(true);
    const { rows } = await platform.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM tasks");
    expect(rows[0]?.n).toBe(KEPT + 5);
  });
});
