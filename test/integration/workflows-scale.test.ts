/**
 * Workflows at their size: 1,000 tasks in a chain (every release on the
 * critical path, driven through the pull API) and 1,000 in parallel (every
 * completion contends for the same workflow lock), run by the real PUSH worker
 * against a local endpoint.
 */
import { describe, expect, it } from "vitest";
import { add, useWorkflowPlatform } from "../helpers/workflow-platform.js";

const platform = useWorkflowPlatform("wfscale");
const N = 1000;

describe("workflows of 1,000 tasks", () => {
  it("completes a chain of 1,000 driven by a pull worker, each task leased with its predecessor's result", async () => {
    // A PULL queue driven from here: the chain's critical path is then the
    // release inside completeTask, not the PUSH fleet's fetch latency.
    const tasks = Array.from({ length: N }, (_, i) => ({ key: `s${i}`, type: "link", queue: "pull", dependsOn: i === 0 ? [] : [`s${i - 1}`] }));
    const started = Date.now();
    const submitted = await platform.api.submitOk({ name: "chain", tasks });
    const submitMs = Date.now() - started;
    const LEASE = `mutation { leaseTasks(queue: "pull", workerId: "chain", max: 5) { leaseToken parents task { id } } }`;
    const COMPLETE = `mutation ($t: ID!, $l: String!, $r: JSON) { completeTask(taskId: $t, leaseToken: $l, result: $r) { status } }`;
    type Leased = { leaseTasks: { leaseToken: string; parents: Record<string, { n: number }>; task: { id: string } }[] };
    for (let i = 0; i < N; i++) {
      const leases = (await platform.api.call<Leased>(LEASE)).data?.leaseTasks ?? [];
      // Only the next link is ever runnable: its predecessor's completion released it.
      expect(leases, `link ${i}`).toHaveLength(1);
      const [lease] = leases;
      const n = i === 0 ? 1 : (lease!.parents[`s${i - 1}`]?.n ?? NaN) + 1;
      const done = await platform.api.call<{ completeTask: { status: string } }>(COMPLETE, { t: lease!.task.id, l: lease!.leaseToken, r: { n } });
      expect(done.data?.completeTask.status).toBe("SUCCEEDED");
    }
    const done = await platform.api.settled(submitted.id, 10_000);
    const ms = Date.now() - started;
    console.info(`1,000-task chain: submitted in ${submitMs} ms, finished in ${ms} ms (${(ms / N).toFixed(1)} ms per link)`);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.tasks.find((t) => t.key === `s${N - 1}`)!.task.result).toEqual({ n: N });
  }, 300_000);

  it("completes 1,000 parallel tasks and finishes the workflow once", async () => {
    const tasks = Array.from({ length: N }, (_, i) => add(`p${i}`, i));
    const started = Date.now();
    const submitted = await platform.api.submitOk({ name: "parallel", tasks });
    expect(submitted.tasks.every((t) => t.task.status === "QUEUED")).toBe(true);
    const done = await platform.api.settled(submitted.id, 290_000);
    const ms = Date.now() - started;
    console.info(`1,000 parallel tasks: finished in ${ms} ms`);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.tasks.every((t) => t.task.status === "SUCCEEDED")).toBe(true);
    const completedAt = new Date(done.completedAt!).getTime();
    const lastTask = await platform.db.db.pool.query("SELECT max(completed_at) AS at FROM tasks WHERE workflow_id = $1", [done.id]);
    expect(completedAt).toBeGreaterThanOrEqual((lastTask.rows[0].at as Date).getTime());
  }, 300_000);
});
