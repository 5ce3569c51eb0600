/**
 * DAG workflows through the public API: a real gateway, scheduler, worker and
 * notifier processes, Postgres, Redis (DB 0 under this file's own key prefix)
 * and the tenant's HTTP endpoint. The exactly-once release race and the
 * 1,000-task chain are database-level: workflows-db.test.ts.
 */
import { describe, expect, it } from "vitest";
import { waitFor } from "../helpers/app-process.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";
import { taskOf } from "../helpers/workflow-api.js";
import { add, bodyOf, useWorkflowPlatform } from "../helpers/workflow-platform.js";

const platform = useWorkflowPlatform("wf", { notifier: true });
const wf = platform.api;
const requestsFor = (taskId: string) => platform.requestsFor(taskId);
const count = async (table: "tasks" | "workflows") => Number((await platform.db.db.pool.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);

describe("workflows run through the platform", () => {
  it("runs a diamond in dependency order and hands each task its parents' results", async () => {
    const submitted = await wf.submitOk({ name: "diamond", tasks: [add("a", 1), add("b", 10, ["a"]), add("c", 100, ["a"]), add("d", 1000, ["b", "c"])] });
    expect(submitted.status).toBe("RUNNING");
    expect(submitted.tasks.map((t) => [t.key, t.task.status, t.dependsOn])).toEqual([
      ["a", "QUEUED", []],
      ["b", "BLOCKED", ["a"]],
      ["c", "BLOCKED", ["a"]],
      ["d", "BLOCKED", ["b", "c"]],
    ]);
    const done = await wf.settled(submitted.id);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.completedAt).not.toBeNull();
    expect(done.tasks.every((t) => t.task.status === "SUCCEEDED" && t.task.workflowId === done.id)).toBe(true);
    expect(taskOf(done, "d").result).toEqual({ value: 1112 });
    const [a] = requestsFor(taskOf(done, "a").id);
    const [d] = requestsFor(taskOf(done, "d").id);
    expect(bodyOf(a!).parents).toEqual({});
    expect(bodyOf(d!).parents).toEqual({ b: { value: 11 }, c: { value: 101 } });
    for (const mid of ["b", "c"]) {
      const [m] = requestsFor(taskOf(done, mid).id);
      expect(m!.at).toBeGreaterThanOrEqual(a!.at);
      expect(d!.at).toBeGreaterThanOrEqual(m!.at);
    }
    const events = await platform.db.db.pool.query("SELECT from_status, to_status FROM task_events WHERE task_id = $1 ORDER BY id", [taskOf(done, "d").id]);
    expect(events.rows.map((r) => `${r.from_status ?? "-"}>${r.to_status}`)).toEqual(["->BLOCKED", "BLOCKED>QUEUED", "QUEUED>RUNNING", "RUNNING>SUCCEEDED"]);
  });

  it("fans out to 20 tasks and back into a PULL join whose lease carries every parent's result", async () => {
    const fan = Array.from({ length: 20 }, (_, i) => add(`p${i}`, i, ["root"]));
    const join = { key: "join", type: "join", queue: "pull", dependsOn: fan.map((f) => f.key) };
    const submitted = await wf.submitOk({ name: "fan", tasks: [add("root", 1000), ...fan, join] });
    const LEASE = `mutation { leaseTasks(queue: "pull", workerId: "w-fan", waitSeconds: 15) { leaseToken parents task { id workflowId } } }`;
    const leased = await wf.call<{ leaseTasks: { leaseToken: string; parents: Record<string, { value: number }>; task: { id: string; workflowId: string } }[] }>(LEASE);
    const [lease] = leased.data!.leaseTasks;
    expect(lease!.task).toEqual({ id: taskOf(submitted, "join").id, workflowId: submitted.id });
    expect(lease!.parents).toEqual(Object.fromEntries(fan.map((f, i) => [f.key, { value: 1000 + i }])));
    const sum = Object.values(lease!.parents).reduce((s, p) => s + p.value, 0);
    const completed = await wf.call(`mutation ($t: ID!, $l: String!, $r: JSON) { completeTask(taskId: $t, leaseToken: $l, result: $r) { status } }`, {
      t: lease!.task.id,
      l: lease!.leaseToken,
      r: { sum },
    });
    expect(completed.errors).toBeUndefined();
    const done = await wf.settled(submitted.id);
    expect(done.status).toBe("SUCCEEDED");
    expect(taskOf(done, "join").result).toEqual({ sum: 20 * 1000 + 190 });
  });

  it("hands a PUSH join its parents' results up to 1 MiB and a marker for the rest, readable through task(id)", async () => {
    const big = "x".repeat(256_000);
    const keys = ["p0", "p1", "p2", "p3", "p4"];
    const submitted = await wf.submitOk({
      name: "big-parents",
      tasks: [...keys.map((key) => ({ key, type: "parent", queue: "pull" })), { ...add("join", 1), dependsOn: keys }],
    });
    const LEASE = `mutation { leaseTasks(queue: "pull", workerId: "w-big", max: 5, waitSeconds: 15) { leaseToken task { id } } }`;
    const leases = (await wf.call<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(LEASE)).data!.leaseTasks;
    expect(leases).toHaveLength(5);
    for (const l of leases) {
      const res = await wf.call(`mutation ($t: ID!, $l: String!, $r: JSON) { completeTask(taskId: $t, leaseToken: $l, result: $r) { status } }`, {
        t: l.task.id,
        l: l.leaseToken,
        r: big,
      });
      expect(res.errors).toBeUndefined();
    }
    const done = await wf.settled(submitted.id);
    expect(done.status).toBe("SUCCEEDED");
    const [join] = requestsFor(taskOf(done, "join").id);
    const p4 = taskOf(done, "p4").id;
    expect(bodyOf(join!).parents).toEqual({ p0: big, p1: big, p2: big, p3: big, p4: { resultOmitted: true, taskId: p4, resultBytes: big.length + 2 } });
    const read = await wf.call<{ task: { result: unknown } }>(`query ($id: ID!) { task(id: $id) { result } }`, { id: p4 });
    expect(read.data?.task.result).toBe(big);
  });

  it("retries a task inside a workflow like anywhere else, then runs its child", async () => {
    const flaky = { key: "flaky", type: "flaky", queue: "hooks", payload: { okFrom: 3 }, maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.1, jitter: false } };
    const submitted = await wf.submitOk({ name: "retry", tasks: [flaky, add("after", 5, ["flaky"])] });
    const done = await wf.settled(submitted.id);
    expect(done.status).toBe("SUCCEEDED");
    expect(taskOf(done, "flaky").attempts).toBe(3);
    expect(requestsFor(taskOf(done, "flaky").id).map((r) => bodyOf(r).attempt)).toEqual([1, 2, 3]);
    expect(taskOf(done, "after").result).toEqual({ value: 5 });
  });

  it("skips everything downstream of a DEAD task, lets other branches finish, and ends FAILED", async () => {
    const submitted = await wf.submitOk({
      name: "fails",
      tasks: [
        add("a", 1),
        { key: "bad", type: "poison", queue: "hooks", dependsOn: ["a"] },
        add("c", 1, ["bad"]),
        add("d", 1, ["c", "e"]),
        add("e", 1, ["a"]),
        add("f", 1, ["e"]),
      ],
    });
    const done = await wf.settled(submitted.id);
    expect(done.status).toBe("FAILED");
    expect(Object.fromEntries(done.tasks.map((t) => [t.key, t.task.status]))).toEqual({
      a: "SUCCEEDED",
      bad: "DEAD",
      c: "SKIPPED",
      d: "SKIPPED",
      e: "SUCCEEDED",
      f: "SUCCEEDED",
    });
    expect(requestsFor(taskOf(done, "c").id)).toHaveLength(0);
    expect(requestsFor(taskOf(done, "d").id)).toHaveLength(0);

    // Its dead task is not redriven on its own: that would run it and leave c and d SKIPPED, the workflow FAILED.
    const bad = taskOf(done, "bad");
    const redrive = await wf.call(`mutation ($id: ID!) { redriveTask(id: $id) { id } }`, { id: bad.id });
    expect(codeOf(redrive)).toBe("CONFLICT");
    expect(redrive.errors?.[0]?.message).toContain("Submit the workflow again");
    // The served schema says so where a caller reads about redriveTask.
    const schema = await wf.call<{ __type: { fields: { name: string; description: string | null }[] } }>(`{ __type(name: "Mutation") { fields { name description } } }`);
    expect(schema.data?.__type.fields.find((f) => f.name === "redriveTask")?.description).toContain("a workflow's task: CONFLICT");
    expect((await wf.settled(submitted.id)).tasks.find((t) => t.key === "bad")?.task.status).toBe("DEAD");
  });

  it("cancelTask on a BLOCKED task skips its dependants; the workflow ends CANCELLED once the rest is done", async () => {
    const submitted = await wf.submitOk({
      name: "cancel-one",
      tasks: [{ key: "r", type: "pull-root", queue: "pull" }, { key: "m", type: "x", queue: "pull", dependsOn: ["r"] }, { key: "n", type: "x", queue: "pull", dependsOn: ["m"] }],
    });
    const cancelled = await wf.call<{ cancelTask: { status: string } }>(`mutation ($id: ID!) { cancelTask(id: $id) { status } }`, { id: taskOf(submitted, "m").id });
    expect(cancelled.data?.cancelTask.status).toBe("CANCELLED");
    const mid = (await wf.read(submitted.id))!;
    expect([mid.status, taskOf(mid, "r").status, taskOf(mid, "n").status]).toEqual(["RUNNING", "QUEUED", "SKIPPED"]);
    const leases = await wf.call<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(`mutation { leaseTasks(queue: "pull", workerId: "w-c1") { leaseToken task { id } } }`);
    const [lease] = leases.data!.leaseTasks;
    expect(lease!.task.id).toBe(taskOf(submitted, "r").id);
    await wf.call(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l) { id } }`, { t: lease!.task.id, l: lease!.leaseToken });
    const done = (await wf.read(submitted.id))!;
    expect([done.status, taskOf(done, "r").status]).toEqual(["CANCELLED", "SUCCEEDED"]);
  });

  it("cancelWorkflow cancels what has not finished, including a running task", async () => {
    const submitted = await wf.submitOk({
      name: "cancel-all",
      tasks: [
        { key: "r", type: "pull-root", queue: "pull" },
        { key: "x", type: "x", queue: "pull", dependsOn: ["r"] },
        { key: "y", type: "x", queue: "hooks", dependsOn: ["x"] },
        { key: "z", type: "pull-other", queue: "pull", priority: "LOW" },
      ],
    });
    const leases = await wf.call<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(`mutation { leaseTasks(queue: "pull", workerId: "w-c2") { leaseToken task { id } } }`);
    const [lease] = leases.data!.leaseTasks;
    expect(lease!.task.id).toBe(taskOf(submitted, "r").id);
    const res = await wf.call<{ cancelWorkflow: { status: string; completedAt: string | null } }>(`mutation ($id: ID!) { cancelWorkflow(id: $id) { status completedAt } }`, {
      id: submitted.id,
    });
    expect(res.data?.cancelWorkflow.status).toBe("CANCELLED");
    expect(res.data?.cancelWorkflow.completedAt).not.toBeNull();
    const after = (await wf.read(submitted.id))!;
    expect(after.tasks.map((t) => [t.key, t.task.status, t.task.cancelRequested])).toEqual([
      ["r", "CANCELLED", true],
      ["x", "CANCELLED", false],
      ["y", "CANCELLED", false],
      ["z", "CANCELLED", false],
    ]);
    const hb = await wf.call<{ heartbeat: { cancelRequested: boolean } }>(`mutation ($t: ID!, $l: String!) { heartbeat(taskId: $t, leaseToken: $l) { cancelRequested } }`, {
      t: lease!.task.id,
      l: lease!.leaseToken,
    });
    expect(hb.data?.heartbeat.cancelRequested).toBe(true);
    const late = await wf.call(`mutation ($t: ID!, $l: String!) { completeTask(taskId: $t, leaseToken: $l) { id } }`, { t: lease!.task.id, l: lease!.leaseToken });
    expect(codeOf(late)).toBe("CONFLICT");
    expect(codeOf(await wf.call(`mutation ($id: ID!) { cancelWorkflow(id: $id) { id } }`, { id: submitted.id }))).toBe("CONFLICT");
    expect(codeOf(await wf.call(`mutation { cancelWorkflow(id: "wf_nope") { id } }`))).toBe("NOT_FOUND");
  });
});

describe("a workflow of 1,000 parallel tasks", () => {
  it("runs every task on the PUSH fleet and finishes the workflow once, after the last task", async () => {
    const started = Date.now();
    const submitted = await wf.submitOk({ name: "parallel", tasks: Array.from({ length: 1000 }, (_, i) => add(`p${i}`, i)) });
    // No dependencies, so nothing is BLOCKED; the fleet may already have started some by the time the answer is read.
    expect(submitted.tasks.every((t) => ["QUEUED", "RUNNING", "SUCCEEDED"].includes(t.task.status))).toBe(true);
    const done = await wf.settled(submitted.id, 110_000);
    console.info(`1,000 parallel tasks: finished in ${Date.now() - started} ms`);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.tasks.every((t) => t.task.status === "SUCCEEDED")).toBe(true);
    const last = await platform.db.db.pool.query("SELECT max(completed_at) AS at FROM tasks WHERE workflow_id = $1", [done.id]);
    expect(new Date(done.completedAt!).getTime()).toBeGreaterThanOrEqual((last.rows[0].at as Date).getTime());
  }, 120_000);
});

describe("webhooks", () => {
  it("delivers workflow.completed with the workflow to a subscribed webhook", async () => {
    const created = await wf.call(`mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`, {
      i: { url: `${platform.receiver.url}/webhooks`, events: ["workflow.completed"] },
    });
    expect(created.errors).toBeUndefined();
    const done = await wf.settled((await wf.submitOk({ name: "notify-me", tasks: [add("a", 1), add("b", 2, ["a"])] })).id);
    const delivery = await waitFor("the workflow.completed delivery", () =>
      platform.receiver.requests.find((r) => r.path === "/webhooks" && (r.json as { data?: { workflow?: { id?: string } } }).data?.workflow?.id === done.id),
    );
    expect(delivery.json).toMatchObject({ type: "workflow.completed", data: { workflow: { id: done.id, name: "notify-me", status: "SUCCEEDED" } } });
    expect(delivery.headers["webhook-signature"]).toMatch(/^v1,/);
  });
});

describe("submitting and reading workflows", () => {
  const bad = async (tasks: unknown[], extra: Record<string, unknown> = {}) => {
    const res = await wf.submit({ name: "bad", tasks, ...extra });
    return { code: codeOf(res), message: res.errors?.[0]?.message ?? "" };
  };

  it("validates the graph before writing anything, naming the offending keys", async () => {
    const before = [await count("workflows"), await count("tasks")];
    const t = (key: string, dependsOn: string[] = []) => ({ key, type: "t", queue: "pull", dependsOn });
    const cycle = await bad([t("start"), t("a", ["start", "c"]), t("b", ["a"]), t("c", ["b"])]);
    expect(cycle).toEqual({ code: "BAD_USER_INPUT", message: expect.stringContaining("dependency cycle: a -> b -> c -> a") });
    expect(await bad([t("a"), t("b", ["ghost"])])).toMatchObject({ message: expect.stringContaining('task "b" depends on unknown key "ghost"') });
    expect(await bad([t("a"), t("a")])).toMatchObject({ message: expect.stringContaining('duplicate key "a"') });
    expect(await bad([t("me", ["me"])])).toMatchObject({ message: expect.stringContaining('task "me" depends on itself') });
    expect((await bad([t("bad key")])).code).toBe("BAD_USER_INPUT");
    expect((await bad([])).code).toBe("BAD_USER_INPUT");
    expect((await bad([{ key: "x", type: "" }])).code).toBe("BAD_USER_INPUT");
    expect((await bad(Array.from({ length: 2001 }, (_, i) => t(`k${i}`)))).message).toMatch(/tasks/);
    // A valid graph on an unknown queue is NOT_FOUND and rolls the workflow row back too.
    expect((await bad([t("a"), { key: "b", type: "t", queue: "missing", dependsOn: ["a"] }])).code).toBe("NOT_FOUND");
    expect([await count("workflows"), await count("tasks")]).toEqual(before);
  });

  it("is idempotent with idempotencyKey, also under concurrent submissions", async () => {
    const input = { name: "once", idempotencyKey: "nightly-42", tasks: [{ key: "a", type: "t", queue: "pull" }, { key: "b", type: "t", queue: "pull", dependsOn: ["a"] }] };
    const all = await Promise.all(Array.from({ length: 5 }, () => wf.submitOk(input)));
    expect(new Set(all.map((w) => w.id)).size).toBe(1);
    const again = await wf.submitOk({ ...input, name: "renamed" });
    expect(again.id).toBe(all[0]!.id);
    expect(again.tasks.map((t) => t.task.id)).toEqual(all[0]!.tasks.map((t) => t.task.id));
    const rows = await platform.db.db.pool.query("SELECT count(*)::int AS n FROM tasks WHERE workflow_id = $1", [again.id]);
    expect(rows.rows[0].n).toBe(2);
    expect((await wf.submitOk({ ...input, idempotencyKey: "nightly-43" })).id).not.toBe(again.id);
    await wf.call(`mutation ($id: ID!) { cancelWorkflow(id: $id) { id } }`, { id: again.id });
  });

  it("lists workflows newest first in keyset pages, filters tasks by workflowId, and hides other tenants'", async () => {
    const ids: string[] = [];
    for (const name of ["l1", "l2", "l3"]) ids.push((await wf.submitOk({ name, tasks: [{ key: "only", type: "t", queue: "pull" }] })).id);
    const LIST = `query ($after: String) { workflows(first: 2, after: $after) { id name } }`;
    const page1 = (await wf.call<{ workflows: { id: string; name: string }[] }>(LIST)).data!.workflows;
    expect(page1.map((w) => w.name)).toEqual(["l3", "l2"]);
    const page2 = (await wf.call<{ workflows: { id: string; name: string }[] }>(LIST, { after: page1[1]!.id })).data!.workflows;
    expect(page2[0]!.name).toBe("l1");
    const tasks = await wf.call<{ tasks: { nodes: { workflowId: string }[]; totalCount: number } }>(
      `query ($w: ID!) { tasks(filter: { workflowId: $w }) { nodes { workflowId } totalCount } }`,
      { w: ids[0] },
    );
    expect(tasks.data?.tasks).toEqual({ nodes: [{ workflowId: ids[0] }], totalCount: 1 });
    const other = await createTenant(platform.gateway);
    const foreign = await gql<{ workflow: unknown; workflows: unknown[] }>(platform.gateway.url, `query ($id: ID!) { workflow(id: $id) { id } workflows { id } }`, { id: ids[0] }, other.apiKey);
    expect(foreign.data).toEqual({ workflow: null, workflows: [] });
    expect(codeOf(await gql(platform.gateway.url, `mutation ($id: ID!) { cancelWorkflow(id: $id) { id } }`, { id: ids[0] }, other.apiKey))).toBe("NOT_FOUND");
  });
});
