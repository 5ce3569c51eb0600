/**
 * A pull worker's refused arguments name themselves: BAD_USER_INPUT's
 * fieldErrors path is the argument (or the item within it), never "".
 */
import { MAX_LEASE_SECONDS } from "@tasklane/core";
import { beforeAll, describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, type CreatedTenant, type GqlResponse } from "../helpers/platform.js";

interface FieldError {
  path: string;
  message: string;
}

const pathsOf = (res: GqlResponse<unknown>): string[] => ((res.errors?.[0]?.extensions?.fieldErrors as FieldError[] | undefined) ?? []).map((f) => f.path);

describe("lease arguments in BAD_USER_INPUT", () => {
  const platform = useGateway();
  let tenant: CreatedTenant;
  const api = (query: string, variables: Record<string, unknown> = {}) => gql(platform.gateway.url, query, variables, tenant.apiKey);
  let lease: { taskId: string; leaseToken: string };

  beforeAll(async () => {
    tenant = await createTenant(platform.gateway);
    const submitted = await gql<{ submitTask: { id: string } }>(platform.gateway.url, `mutation { submitTask(input: { type: "args", queue: "default" }) { id } }`, {}, tenant.apiKey);
    const leased = await gql<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(
      platform.gateway.url,
      `mutation { leaseTasks(queue: "default", workerId: "w", max: 1) { leaseToken task { id } } }`,
      {},
      tenant.apiKey,
    );
    const first = leased.data?.leaseTasks[0];
    expect(first?.task.id).toBe(submitted.data?.submitTask.id);
    lease = { taskId: first!.task.id, leaseToken: first!.leaseToken };
  });

  it("heartbeat names extendSeconds, and the lease stays as it was", async () => {
    const HEARTBEAT = `mutation ($t: ID!, $l: String!, $s: Int) { heartbeat(taskId: $t, leaseToken: $l, extendSeconds: $s) { leaseExpiresAt } }`;
    for (const s of [0, -5, MAX_LEASE_SECONDS + 1]) {
      const res = await api(HEARTBEAT, { t: lease.taskId, l: lease.leaseToken, s });
      expect(codeOf(res), `extendSeconds ${s}`).toBe("BAD_USER_INPUT");
      expect(pathsOf(res), `extendSeconds ${s}`).toEqual(["extendSeconds"]);
      expect(res.errors?.[0]?.message).toMatch(/^Invalid extendSeconds: /);
    }
    expect(pathsOf(await api(HEARTBEAT, { t: lease.taskId, l: "", s: 30 }))).toEqual(["leaseToken"]);
    expect((await api(HEARTBEAT, { t: lease.taskId, l: lease.leaseToken, s: 30 })).errors).toBeUndefined();
  });

  it("leaseTasks names max, leaseSeconds, waitSeconds and startAheadMs", async () => {
    const cases: Array<[string, string]> = [
      ["max: 0", "max"],
      ["leaseSeconds: 0", "leaseSeconds"],
      ["waitSeconds: -1", "waitSeconds"],
      ["startAheadMs: -1", "startAheadMs"],
      ['workerId: ""', "workerId"],
    ];
    for (const [arg, path] of cases) {
      const res = await api(`mutation { leaseTasks(queue: "default", workerId: "w", ${arg}) { leaseToken } }`.replace('workerId: "w", workerId', "workerId"));
      expect(codeOf(res), arg).toBe("BAD_USER_INPUT");
      expect(pathsOf(res), arg).toEqual([path]);
    }
  });

  it("completeTasks names the completions argument and the item within it", async () => {
    const COMPLETE = `mutation ($c: [TaskCompletionInput!]!) { completeTasks(completions: $c) { taskId accepted } }`;
    const badToken = await api(COMPLETE, { c: [{ taskId: lease.taskId, leaseToken: lease.leaseToken }, { taskId: "task_x", leaseToken: "" }] });
    expect(codeOf(badToken)).toBe("BAD_USER_INPUT");
    expect(pathsOf(badToken)).toEqual(["completions.1.leaseToken"]);
    expect(pathsOf(await api(COMPLETE, { c: [] }))).toEqual(["completions"]);
    const twice = await api(COMPLETE, { c: [{ taskId: lease.taskId, leaseToken: lease.leaseToken }, { taskId: lease.taskId, leaseToken: lease.leaseToken }] });
    expect(pathsOf(twice)).toEqual(["completions"]);
    expect(twice.errors?.[0]?.message).toBe("Invalid completions: each taskId at most once per call");
  });

  it("failTask names taskId and error", async () => {
    const FAIL = `mutation ($t: ID!, $l: String!, $e: String!) { failTask(taskId: $t, leaseToken: $l, error: $e) { id } }`;
    const noId = await api(FAIL, { t: "", l: lease.leaseToken, e: "boom" });
    expect(codeOf(noId)).toBe("BAD_USER_INPUT");
    expect(pathsOf(noId)).toEqual(["taskId"]);
    const huge = await api(FAIL, { t: lease.taskId, l: lease.leaseToken, e: "x".repeat(1_000_001) });
    expect(codeOf(huge)).toBe("BAD_USER_INPUT");
    expect(pathsOf(huge)).toEqual(["error"]);
  });

  it("single arguments outside leases name themselves too: id, webhookId, name, queue, first", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      [`query ($v: ID!) { task(id: $v) { id } }`, { v: "" }, "id"],
      [`mutation ($v: ID!) { cancelTask(id: $v) { id } }`, { v: "x".repeat(201) }, "id"],
      [`query ($v: ID) { webhookDeliveries(webhookId: $v) { id } }`, { v: "" }, "webhookId"],
      [`query ($v: Int) { webhookDeliveries(first: $v) { id } }`, { v: 0 }, "first"],
      [`mutation ($v: String!) { pauseQueue(name: $v) { name } }`, { v: "no spaces allowed" }, "name"],
      [`query ($v: String) { deadLetterTasks(queue: $v) { totalCount } }`, { v: "no spaces allowed" }, "queue"],
    ];
    for (const [query, variables, path] of cases) {
      const res = await api(query, variables);
      expect({ query, code: codeOf(res), paths: pathsOf(res) }).toEqual({ query, code: "BAD_USER_INPUT", paths: [path] });
    }
  });
});
