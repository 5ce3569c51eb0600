/**
 * Bulk task reads bounded per answer (core's answer-budget.ts): workflows'
 * tasks and schedules' runs. One answer reads at most ANSWER_TASK_ROWS of
 * them (more is refused, BAD_USER_INPUT) and ANSWER_BODY_BYTES (4 MiB) of
 * their payloads and results: past it a task's payload and result answer
 * null with a BAD_USER_INPUT error, and the rest of the answer is whole. The
 * payloads here compress to almost nothing in Postgres: the bound is on
 * their JSON text, what the gateway holds and sends.
 */
import { ANSWER_BODY_BYTES, ANSWER_TASK_ROWS, ErrorCode, MAX_WORKFLOW_TASKS } from "@tasklane/core";
import { listScheduleRuns } from "@tasklane/db";
import { beforeAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql, type GqlError } from "../helpers/platform.js";

const BLOB = "x".repeat(200 * 1024);
/** Bodies of 200 KiB that fit in 4 MiB. */
const FIT = Math.floor(ANSWER_BODY_BYTES / BLOB.length);

interface Node {
  id: string;
  payload: { blob: string; n: number } | null;
}

describe("bulk task reads bounded per answer", () => {
  const platform = useGateway();
  let apiKey = "";
  let tenantId = "";
  const call = <T>(query: string, variables: Record<string, unknown> = {}) => gql<T>(platform.gateway.url, query, variables, apiKey);
  const ok = async <T>(query: string, variables: Record<string, unknown> = {}): Promise<T> => {
    const res = await call<T>(query, variables);
    if (res.errors) throw new Error(JSON.stringify(res.errors).slice(0, 2000));
    return res.data as T;
  };

  /** The payloads withheld in an answer: each a BAD_USER_INPUT error on a payload field, none past them. */
  const expectWithheld = (errors: GqlError[] | undefined, nodes: Node[]) => {
    const withheld = nodes.filter((n) => n.payload === null);
    const kept = nodes.filter((n) => n.payload !== null);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThanOrEqual(FIT);
    expect(withheld.length).toBeGreaterThan(0);
    expect(kept.every((n) => n.payload?.blob === BLOB)).toBe(true);
    expect(errors).toHaveLength(withheld.length);
    for (const error of errors ?? []) {
      expect(error.extensions?.code).toBe(ErrorCode.BAD_USER_INPUT);
      expect(error.extensions?.reason).toBe("ANSWER_BODY_BYTES");
      expect(error.message).toContain("task(id)");
      expect(error.path?.at(-1)).toBe("payload");
    }
    return { kept, withheld };
  };

  beforeAll(async () => {
    ({ apiKey, tenantId } = await createTenant(platform.gateway, "bulk-reads", {
      maxPendingTasks: 20_000,
      dailyTaskQuota: 50_000,
      apiRatePerSecond: 1_000,
      apiBurst: 1_000,
    }));
  });

  it("withholds workflow tasks' payloads past 4 MiB in id order; every task is still listed and each is readable with task(id)", async () => {
    for (const name of ["big-a", "big-b"]) {
      const tasks = Array.from({ length: 12 }, (_, n) => ({ key: `t${n}`, type: "big", payload: { blob: BLOB, n } }));
      await ok(`mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`, { i: { name, tasks } });
    }
    type Answer = { workflows: Array<{ id: string; taskCount: number; tasks: Array<{ key: string; task: Node }> }> };
    // result too: a null result past the budget answers null, not an error (nothing was withheld).
    const query = `query { workflows(first: 10) { id taskCount tasks { key task { id payload result } } } }`;
    // Twice: the gateway interprets an operation's first run and runs it compiled (graphql-jit) after.
    for (let run = 0; run < 2; run++) {
      const res = await call<Answer>(query);
      const workflows = res.data?.workflows ?? [];
      expect(workflows.map((w) => [w.taskCount, w.tasks.length])).toEqual([
        [12, 12],
        [12, 12],
      ]);
      const nodes = workflows.flatMap((w) => w.tasks.map((t) => t.task));
      expect(nodes.every((n) => (n as Node & { result: unknown }).result === null)).toBe(true);
      const { kept, withheld } = expectWithheld(res.errors, nodes);
      // In id order over the answer's workflows: every task kept comes before every one withheld.
      const lastKept = kept.map((n) => n.id).sort().at(-1) as string;
      expect(withheld.every((n) => n.id > lastKept)).toBe(true);
      const byId = await ok<{ task: Node }>(`query ($id: ID!) { task(id: $id) { id payload } }`, { id: withheld[0]!.id });
      expect(byId.task.payload?.blob).toBe(BLOB);
    }
    // A single workflow's 2.4 MB of payloads fits whole.
    const one = await ok<{ workflow: { tasks: Array<{ task: Node }> } }>(`query ($id: ID!) { workflow(id: $id) { tasks { task { id payload } } } }`, {
      id: (await ok<Answer>(`query { workflows(first: 1) { id taskCount } }`)).workflows[0]!.id,
    });
    expect(one.workflow.tasks.every((t) => t.task.payload?.blob === BLOB)).toBe(true);
  });

  it(`refuses workflows holding more than ${ANSWER_TASK_ROWS.toLocaleString("en-US")} tasks together; taskCount counts them without reading them`, async () => {
    const full = ANSWER_TASK_ROWS / MAX_WORKFLOW_TASKS;
    for (let w = 0; w <= full; w++) {
      const tasks = Array.from({ length: MAX_WORKFLOW_TASKS }, (_, n) => ({ key: `k${n}`, type: "small", payload: { n } }));
      await ok(`mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`, { i: { name: `wide-${w}`, tasks } });
    }
    const counted = await ok<{ workflows: Array<{ taskCount: number }> }>(`query { workflows(first: 20) { taskCount } }`);
    expect(counted.workflows.map((w) => w.taskCount)).toEqual([...Array<number>(full + 1).fill(MAX_WORKFLOW_TASKS), 12, 12]);

    // Exactly at the bound: read whole.
    const atBound = await ok<{ workflows: Array<{ tasks: unknown[] }> }>(`query ($n: Int) { workflows(first: $n) { tasks { key } } }`, { n: full });
    expect(atBound.workflows.reduce((sum, w) => sum + w.tasks.length, 0)).toBe(ANSWER_TASK_ROWS);

    const over = await call<unknown>(`query ($n: Int) { workflows(first: $n) { id tasks { key } } }`, { n: full + 1 });
    expect(over.status).toBe(200);
    expect(over.errors?.length).toBeGreaterThan(0);
    for (const error of over.errors ?? []) {
      expect(error.extensions?.code).toBe(ErrorCode.BAD_USER_INPUT);
      expect(error.message).toContain("at most 10,000");
    }
  });

  it("withholds schedule runs' payloads past 4 MiB, and refuses more runs than the answer has left", async () => {
    const scheduleIds: string[] = [];
    for (const name of ["runs-a", "runs-b"]) {
      const input = { name, cron: "0 0 1 1 *", enabled: false, task: { type: "big", payload: { blob: BLOB, n: 0 } } };
      const { createSchedule } = await ok<{ createSchedule: { id: string } }>(`mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`, { i: input });
      scheduleIds.push(createSchedule.id);
      for (let i = 0; i < 12; i++) await ok(`mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`, { id: createSchedule.id });
    }
    type Answer = { schedules: Array<{ id: string; runs: Node[] }> };
    const query = `query { schedules { id runs(first: 20) { id payload } } }`;
    for (let run = 0; run < 2; run++) {
      const res = await call<Answer>(query);
      const schedules = res.data?.schedules ?? [];
      expect(schedules.map((s) => [s.id, s.runs.length])).toEqual(scheduleIds.map((id) => [id, 12]));
      const { withheld } = expectWithheld(
        res.errors,
        schedules.flatMap((s) => s.runs),
      );
      // Schedules in the list's order, each one's runs newest first: the second schedule's last runs are the ones withheld.
      expect(schedules[0]!.runs.every((r) => r.payload !== null)).toBe(true);
      expect(schedules[1]!.runs.at(-1)?.payload).toBeNull();
      expect(withheld.length).toBe(24 - FIT);
    }

    // The row bound, with a small allowance (a real one would need 10,001 runs): one run past it refuses the read.
    const db = { pool: platform.database.db.pool };
    await expect(listScheduleRuns(db, tenantId, scheduleIds, 20, { bytes: 0, rows: 23 })).rejects.toMatchObject({ code: ErrorCode.BAD_USER_INPUT });
    const read = await listScheduleRuns(db, tenantId, scheduleIds, 20, { bytes: 0, rows: 24 });
    expect(read.used).toEqual({ bytes: 0, rows: 24 });
  });

  it("aliased tasks pages share the answer's 4 MiB instead of each holding 4 MiB; each still holds a task and goes on", async () => {
    const other = await createTenant(platform.gateway, "aliases", { maxPendingTasks: 1_000 });
    for (let i = 0; i < 30; i += 10) {
      const inputs = Array.from({ length: 10 }, (_, k) => ({ type: "big", payload: { blob: BLOB, n: i + k } }));
      const res = await gql(platform.gateway.url, `mutation ($in: [SubmitTaskInput!]!) { submitTasks(inputs: $in) { id } }`, { in: inputs }, other.apiKey);
      expect(res.errors).toBeUndefined();
    }
    type Page = { nodes: Node[]; pageInfo: { hasNextPage: boolean } };
    const page = `tasks(first: 500) { nodes { id payload } pageInfo { hasNextPage } }`;
    for (let run = 0; run < 2; run++) {
      const res = await gql<Record<string, Page>>(platform.gateway.url, `query { a: ${page} b: ${page} c: ${page} }`, {}, other.apiKey);
      expect(res.errors).toBeUndefined();
      const pages = Object.values(res.data ?? {});
      expect(pages).toHaveLength(3);
      for (const p of pages) {
        expect(p.nodes.length).toBeGreaterThan(0);
        expect(p.nodes.every((n) => n.payload?.blob === BLOB)).toBe(true);
        expect(p.pageInfo.hasNextPage).toBe(true);
      }
      // 4 MiB in all, and a task for each page past it.
      expect(pages.reduce((sum, p) => sum + p.nodes.length, 0)).toBeLessThanOrEqual(FIT + 2);
    }
  });

  it("a lease stops leasing once its tasks' payloads pass 4 MiB (at least one task); the rest stay for the next lease", async () => {
    const other = await createTenant(platform.gateway, "leases", { maxPendingTasks: 1_000 });
    for (let i = 0; i < 30; i += 10) {
      const inputs = Array.from({ length: 10 }, (_, k) => ({ type: "big", payload: { blob: BLOB, n: i + k } }));
      const res = await gql(platform.gateway.url, `mutation ($in: [SubmitTaskInput!]!) { submitTasks(inputs: $in) { id } }`, { in: inputs }, other.apiKey);
      expect(res.errors).toBeUndefined();
    }
    const lease = async () => {
      const res = await gql<{ leaseTasks: Array<{ task: Node }> }>(
        platform.gateway.url,
        `mutation { leaseTasks(queue: "default", workerId: "w", max: 100) { task { id payload } } }`,
        {},
        other.apiKey,
      );
      expect(res.errors).toBeUndefined();
      return res.data?.leaseTasks ?? [];
    };
    const first = await lease();
    expect(first.length).toBe(FIT);
    expect(first.every((l) => l.task.payload?.blob === BLOB)).toBe(true);
    const second = await lease();
    expect(second.length).toBe(30 - FIT);
    expect(new Set([...first, ...second].map((l) => l.task.payload?.n)).size).toBe(30);
    expect(await lease()).toEqual([]);
  });
});
