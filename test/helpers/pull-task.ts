import { expect } from "vitest";
import { gql } from "./platform.js";

/**
 * Submits a task to the tenant's default PULL queue and completes it through
 * the API as a pull worker would (lease, then completeTask with `{ ok: true }`);
 * answers the task's id. For tests of what a finished task sets off.
 */
export async function runPullTask(url: string, key: string, opts: { type: string; workerId: string; callbackUrl?: string }): Promise<string> {
  const submitted = await gql<{ submitTask: { id: string } }>(
    url,
    `mutation ($t: String!, $c: String) { submitTask(input: { type: $t, queue: "default", callbackUrl: $c }) { id } }`,
    { t: opts.type, c: opts.callbackUrl ?? null },
    key,
  );
  const taskId = submitted.data?.submitTask.id;
  if (taskId === undefined) throw new Error(JSON.stringify(submitted.errors));
  const lease = await gql<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(
    url,
    `mutation ($w: String!) { leaseTasks(queue: "default", workerId: $w, max: 1) { leaseToken task { id } } }`,
    { w: opts.workerId },
    key,
  );
  const leased = lease.data?.leaseTasks[0];
  expect(leased?.task.id).toBe(taskId);
  const done = await gql(url, `mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l, result: { ok: true }) { status } }`, { t: taskId, l: leased?.leaseToken }, key);
  expect(done.errors).toBeUndefined();
  return taskId;
}
