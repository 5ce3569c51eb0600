/**
 * The SDK and answers whose task bodies the gateway withheld: a workflow's
 * tasks carry at most 4 MiB of payloads and results in one answer, the rest
 * answer null with a BAD_USER_INPUT (reason ANSWER_BODY_BYTES) error. The SDK
 * takes such an answer (submitWorkflow's work is done) and reads the withheld
 * bodies task by task, so its callers get every payload whole.
 */
import { ANSWER_TASK_ROWS, MAX_WORKFLOW_TASKS } from "@tasklane/core";
import { TasklaneClient } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";

const TASKS = 20;
const BLOB = "x".repeat(250 * 1024);

describe("SDK reads bodies a bulk answer withheld", () => {
  const platform = useGateway();

  it("submits, reads and lists a workflow whose payloads pass 4 MiB, every payload whole, the workflow created once", async () => {
    const { apiKey } = await createTenant(platform.gateway, "withheld", { maxPendingTasks: 1_000 });
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const tasks = Array.from({ length: TASKS }, (_, i) => ({ key: `t${i}`, type: "w", payload: { i, blob: BLOB } }));

    const submitted = await client.workflows.submit({ name: "big", tasks });
    expect(submitted.tasks).toHaveLength(TASKS);
    expect(submitted.tasks.map((t) => (t.task.payload as { i: number; blob: string }).i)).toEqual(tasks.map((t) => t.payload.i));
    expect(submitted.tasks.every((t) => (t.task.payload as { blob: string }).blob === BLOB)).toBe(true);

    // The gateway did withhold some: the same read without the SDK has errors for them.
    const raw = await gql<{ workflow: { tasks: Array<{ task: { payload: unknown } }> } }>(
      platform.gateway.url,
      `query ($id: ID!) { workflow(id: $id) { tasks { task { id payload } } } }`,
      { id: submitted.id },
      apiKey,
    );
    expect(raw.errors?.length ?? 0).toBeGreaterThan(0);
    expect(raw.errors?.every((e) => e.extensions?.code === "BAD_USER_INPUT" && e.extensions.reason === "ANSWER_BODY_BYTES")).toBe(true);

    const read = await client.workflows.get(submitted.id);
    expect(read?.tasks.every((t) => (t.task.payload as { blob: string }).blob === BLOB)).toBe(true);
    const [listed] = await client.workflows.list({ first: 1 });
    expect(listed?.id).toBe(submitted.id);
    expect(listed?.tasks.every((t) => (t.task.payload as { blob: string }).blob === BLOB)).toBe(true);
    const { rows } = await platform.database.db.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM workflows");
    expect(rows[0]?.n).toBe(1);
  });

  it("iterates workflows holding more tasks together than one answer reads, asking for smaller pages", async () => {
    const { apiKey } = await createTenant(platform.gateway, "wide", { maxPendingTasks: 20_000, dailyTaskQuota: 20_000 });
    const client = new TasklaneClient({ url: platform.gateway.url, apiKey });
    const count = ANSWER_TASK_ROWS / MAX_WORKFLOW_TASKS + 1;
    const ids: string[] = [];
    for (let w = 0; w < count; w++) {
      const tasks = Array.from({ length: MAX_WORKFLOW_TASKS }, (_, n) => ({ key: `k${n}`, type: "small", payload: { n } }));
      ids.push((await client.workflows.submit({ name: `wide-${w}`, tasks })).id);
    }
    // One page of them all is more than an answer reads: refused, with the reason the SDK acts on.
    const refused = await client.workflows.list({ first: count }).then(
      () => null,
      (error: { code?: string; extensions?: Record<string, unknown> }) => error,
    );
    expect(refused?.code).toBe("BAD_USER_INPUT");
    expect(refused?.extensions?.reason).toBe("ANSWER_TASK_ROWS");

    const seen: Array<{ id: string; tasks: number }> = [];
    for await (const workflow of client.workflows.iterate({ pageSize: 50 })) seen.push({ id: workflow.id, tasks: workflow.tasks.length });
    expect(seen.map((w) => w.id).sort()).toEqual([...ids].sort());
    expect(seen.every((w) => w.tasks === MAX_WORKFLOW_TASKS)).toBe(true);
  });
});
