/**
 * completeTasks { task { … } } answers each recorded outcome with its task
 * read back whole: 500 tasks of 256 KiB payloads was 128 MB in one answer.
 * Those tasks' payloads and results come out of the answer's 4 MiB (core's
 * answer-budget.ts): past it, in id order, a task is answered whole but for
 * them, each null with a BAD_USER_INPUT (reason ANSWER_BODY_BYTES) error.
 * Every outcome is still recorded. A completeTasks that does not select
 * `task` (the SDK Worker's) reads no task back at all.
 */
import { ANSWER_BODY_BYTES, ErrorCode } from "@tasklane/core";
import { TasklaneClient } from "@tasklane/sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";

const BLOB = "x".repeat(200 * 1024);
/** Bodies of 200 KiB that fit in 4 MiB. */
const FIT = Math.floor(ANSWER_BODY_BYTES / BLOB.length);
const TASKS = 30;

interface Outcome {
  taskId: string;
  accepted: boolean;
  task?: { id: string; status: string; payload: { blob: string; n: number } | null; result: unknown } | null;
}

describe("completeTasks answers bounded per answer", () => {
  const platform = useGateway();
  let apiKey = "";
  const call = <T>(query: string, variables: Record<string, unknown> = {}) => gql<T>(platform.gateway.url, query, variables, apiKey);

  /** Submits `count` big tasks (a third with an ordering key each, which take the general completion path) and leases them all. */
  const leaseBig = async (count: number, from: number): Promise<Array<{ taskId: string; leaseToken: string }>> => {
    for (let i = 0; i < count; i += 10) {
      const inputs = Array.from({ length: 10 }, (_, k) => ({
        type: "big",
        payload: { blob: BLOB, n: from + i + k },
        ...((i + k) % 3 === 0 ? { orderingKey: `key-${from + i + k}` } : {}),
      }));
      const res = await call(`mutation ($in: [SubmitTaskInput!]!) { submitTasks(inputs: $in) { id } }`, { in: inputs });
      expect(res.errors).toBeUndefined();
    }
    const leased: Array<{ taskId: string; leaseToken: string }> = [];
    // A lease stops at 4 MiB of payloads: a few leases take them all.
    for (let round = 0; round < 10 && leased.length < count; round++) {
      const res = await call<{ leaseTasks: Array<{ leaseToken: string; task: { id: string } }> }>(
        `mutation { leaseTasks(queue: "default", workerId: "w", max: 100) { leaseToken task { id } } }`,
      );
      expect(res.errors).toBeUndefined();
      for (const l of res.data?.leaseTasks ?? []) leased.push({ taskId: l.task.id, leaseToken: l.leaseToken });
    }
    expect(leased).toHaveLength(count);
    return leased;
  };

  beforeAll(async () => {
    ({ apiKey } = await createTenant(platform.gateway, "completions", { maxPendingTasks: 1_000, apiRatePerSecond: 1_000, apiBurst: 1_000 }));
  });

  it("withholds the recorded tasks' payloads and results past 4 MiB; every outcome is recorded and each task readable with task(id)", async () => {
    const leased = await leaseBig(TASKS, 0);
    const completions = leased.map((l) => ({ ...l, result: { ok: l.taskId } }));
    const res = await call<{ completeTasks: Outcome[] }>(
      `mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted task { id status payload result } } }`,
      { c: completions },
    );
    const outcomes = res.data?.completeTasks ?? [];
    expect(outcomes.map((o) => [o.taskId, o.accepted, o.task?.id, o.task?.status])).toEqual(leased.map((l) => [l.taskId, true, l.taskId, "SUCCEEDED"]));
    const withheld = outcomes.flatMap((o, i) => (o.task?.payload === null ? [i] : []));
    const kept = outcomes.filter((o) => o.task?.payload != null);
    expect(kept.length).toBeGreaterThan(0);
    expect(withheld.length).toBeGreaterThan(0);
    expect(kept.length + withheld.length).toBe(TASKS);
    expect(kept.every((o) => o.task?.payload?.blob === BLOB && (o.task.result as { ok: string }).ok === o.taskId)).toBe(true);
    // Each withheld task's payload and result: one error each, nothing else.
    const expected = withheld.flatMap((i) => [
      ["completeTasks", i, "task", "payload"],
      ["completeTasks", i, "task", "result"],
    ]);
    expect((res.errors ?? []).map((e) => e.path).sort()).toEqual(expected.sort());
    for (const error of res.errors ?? []) {
      expect(error.extensions?.code).toBe(ErrorCode.BAD_USER_INPUT);
      expect(error.extensions?.reason).toBe("ANSWER_BODY_BYTES");
    }
    // The bodies kept (payload and result of each) fit in 4 MiB.
    expect(kept.length).toBeLessThanOrEqual(FIT);
    const last = outcomes[withheld[0] as number]!.taskId;
    const byId = await call<{ task: { payload: { blob: string } | null; result: unknown } }>(`query ($id: ID!) { task(id: $id) { payload result } }`, { id: last });
    expect(byId.data?.task.payload?.blob).toBe(BLOB);
    expect(byId.data?.task.result).toEqual({ ok: last });
  });

  it("answers a workflow task's outcome whole (the statement that advances its workflow answers within the budget too)", async () => {
    const wf = await call<{ submitWorkflow: { id: string } }>(
      `mutation { submitWorkflow(input: { name: "one", tasks: [{ key: "a", type: "wf", payload: { n: 1 } }, { key: "b", type: "wf", dependsOn: ["a"] }] }) { id } }`,
    );
    expect(wf.errors).toBeUndefined();
    const lease = await call<{ leaseTasks: Array<{ leaseToken: string; task: { id: string } }> }>(
      `mutation { leaseTasks(queue: "default", workerId: "w", max: 10) { leaseToken task { id } } }`,
    );
    const [leased] = lease.data?.leaseTasks ?? [];
    expect(lease.data?.leaseTasks).toHaveLength(1);
    const res = await call<{ completeTasks: Outcome[] }>(
      `mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted task { id status payload result } } }`,
      { c: [{ taskId: leased!.task.id, leaseToken: leased!.leaseToken, result: { r: 1 } }] },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.completeTasks[0]).toMatchObject({ accepted: true, task: { status: "SUCCEEDED", payload: { n: 1 }, result: { r: 1 } } });
    // Its workflow advanced: the dependant is leasable now.
    const next = await call<{ leaseTasks: Array<{ task: { id: string } }> }>(`mutation { leaseTasks(queue: "default", workerId: "w", max: 10) { task { id } } }`);
    expect(next.data?.leaseTasks).toHaveLength(1);
  });

  it("answers a completeTasks that does not ask for the tasks without errors (the SDK Worker's)", async () => {
    const leased = await leaseBig(TASKS, 100);
    const res = await call<{ completeTasks: Outcome[] }>(
      `mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted } }`,
      { c: leased.map((l) => ({ ...l, result: null })) },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.completeTasks.every((o) => o.accepted)).toBe(true);
  });

  it("gives the SDK's completeMany every task whole (it reads the withheld bodies with task(id))", async () => {
    const leased = await leaseBig(TASKS, 200);
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const outcomes = await client.leases.completeMany(leased.map((l) => ({ ...l, result: { done: true } })));
    expect(outcomes.map((o) => o.taskId)).toEqual(leased.map((l) => l.taskId));
    expect(outcomes.every((o) => o.accepted && (o.task?.payload as { blob: string }).blob === BLOB)).toBe(true);
    expect(outcomes.every((o) => (o.task?.result as { done: boolean }).done === true)).toBe(true);
  });
});
