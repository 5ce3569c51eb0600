/**
 * The input-abuse catalogue (test/security/input-abuse.test.ts): every
 * contract operation that takes a string, with valid variables holding every
 * string field it accepts, so each string can be swapped for a huge one; and
 * the typed refusals expected for hostile numbers, cron expressions and
 * time zones.
 */
export interface StringTarget {
  op: string;
  query: string;
  /** Valid variables: every string leaf is replaced in turn. */
  vars: Record<string, unknown>;
  /** Operations only the admin token may call. */
  operator?: boolean;
}

const TASK_ID = "task_0190f0f0f0f07000800000000000000a";
/** Well-formed cursors (each list refuses any other as BAD_USER_INPUT, which the catalogue's base calls must not be). */
const TASK_CURSOR = Buffer.from(TASK_ID).toString("base64url");
/** deadLetterTasks' cursor: when the last task died (ms) and its id. */
const DEAD_LETTER_CURSOR = Buffer.from(`1700000000000.${TASK_ID}`).toString("base64url");
const WORKFLOW_CURSOR = "wf_0190f0f0f0f07000800000000000000a";
const FAR_CRON = "0 0 1 1 *";

const fullTask = {
  type: "t",
  queue: "default",
  payload: { s: "v" },
  runAt: "2027-06-01T00:00:00.000Z",
  idempotencyKey: "k",
  orderingKey: "o",
  callbackUrl: "https://hooks.invalid/cb",
  metadata: { m: "v" },
};
const template = { type: "t", queue: "default", payload: { s: "v" } };

export const STRING_TARGETS: StringTarget[] = [
  { op: "submitTask", query: `mutation ($i: SubmitTaskInput!) { submitTask(input: $i) { id } }`, vars: { i: fullTask } },
  { op: "submitTasks", query: `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, vars: { i: [fullTask] } },
  {
    op: "createSchedule",
    query: `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`,
    vars: { i: { name: "n", cron: FAR_CRON, timezone: "UTC", task: template } },
  },
  {
    op: "updateSchedule",
    query: `mutation ($id: ID!, $i: UpdateScheduleInput!) { updateSchedule(id: $id, input: $i) { id } }`,
    vars: { id: "sch_0190f0f0f0f07000800000000000000a", i: { cron: FAR_CRON, timezone: "UTC", task: template } },
  },
  {
    op: "submitWorkflow",
    query: `mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`,
    vars: { i: { name: "w", idempotencyKey: "wk", tasks: [{ key: "a", ...template }, { key: "b", type: "t", dependsOn: ["a"] }] } },
  },
  {
    op: "upsertQueue",
    query: `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`,
    vars: { i: { name: "q", mode: "PUSH", endpointUrl: "https://hooks.invalid/push" } },
  },
  { op: "createWebhook", query: `mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { secret } }`, vars: { i: { url: "https://hooks.invalid/w", events: ["*"] } } },
  { op: "createApiKey", query: `mutation ($n: String!, $s: [String!]) { createApiKey(name: $n, scopes: $s) { secret } }`, vars: { n: "k", s: ["read"] } },
  { op: "revokeApiKey", query: `mutation ($id: ID!) { revokeApiKey(id: $id) { id } }`, vars: { id: "key_x" } },
  { op: "cancelTask", query: `mutation ($id: ID!) { cancelTask(id: $id) { id } }`, vars: { id: TASK_ID } },
  { op: "redriveTask", query: `mutation ($id: ID!) { redriveTask(id: $id) { id } }`, vars: { id: TASK_ID } },
  { op: "replayTask", query: `mutation ($id: ID!) { replayTask(id: $id) { id } }`, vars: { id: TASK_ID } },
  { op: "rescheduleTask", query: `mutation ($id: ID!, $r: DateTime) { rescheduleTask(id: $id, runAt: $r) { id } }`, vars: { id: TASK_ID, r: "2027-06-01T00:00:00.000Z" } },
  { op: "deleteSchedule", query: `mutation ($id: ID!) { deleteSchedule(id: $id) }`, vars: { id: "sch_x" } },
  { op: "triggerSchedule", query: `mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`, vars: { id: "sch_x" } },
  { op: "cancelWorkflow", query: `mutation ($id: ID!) { cancelWorkflow(id: $id) { id } }`, vars: { id: "wf_x" } },
  { op: "deleteWebhook", query: `mutation ($id: ID!) { deleteWebhook(id: $id) }`, vars: { id: "whk_x" } },
  { op: "pauseQueue", query: `mutation ($n: String!) { pauseQueue(name: $n) { name } }`, vars: { n: "missing" } },
  { op: "resumeQueue", query: `mutation ($n: String!) { resumeQueue(name: $n) { name } }`, vars: { n: "missing" } },
  { op: "leaseTasks", query: `mutation ($q: String!, $w: String!) { leaseTasks(queue: $q, workerId: $w, max: 1) { leaseToken } }`, vars: { q: "missing", w: "w" } },
  { op: "heartbeat", query: `mutation ($id: ID!, $t: String!) { heartbeat(taskId: $id, leaseToken: $t) { leaseExpiresAt } }`, vars: { id: TASK_ID, t: "lt_1_x" } },
  { op: "completeTask", query: `mutation ($id: ID!, $t: String!, $r: JSON) { completeTask(taskId: $id, leaseToken: $t, result: $r) { id } }`, vars: { id: TASK_ID, t: "lt_1_x", r: { s: "v" } } },
  { op: "failTask", query: `mutation ($id: ID!, $t: String!, $e: String!) { failTask(taskId: $id, leaseToken: $t, error: $e) { id } }`, vars: { id: TASK_ID, t: "lt_1_x", e: "boom" } },
  { op: "task", query: `query ($id: ID!) { task(id: $id) { id } }`, vars: { id: TASK_ID } },
  {
    op: "tasks",
    query: `query ($f: TaskFilter, $a: String) { tasks(filter: $f, after: $a) { totalCount } }`,
    vars: { f: { type: "t", queue: "default", workflowId: "wf_x", scheduleId: "sch_x", createdAfter: "2020-01-01T00:00:00Z", createdBefore: "2030-01-01T00:00:00Z" }, a: TASK_CURSOR },
  },
  { op: "deadLetterTasks", query: `query ($q: String, $a: String) { deadLetterTasks(queue: $q, after: $a) { totalCount } }`, vars: { q: "default", a: DEAD_LETTER_CURSOR } },
  { op: "schedule", query: `query ($id: ID!) { schedule(id: $id) { id } }`, vars: { id: "sch_x" } },
  { op: "workflow", query: `query ($id: ID!) { workflow(id: $id) { id } }`, vars: { id: "wf_x" } },
  { op: "workflows", query: `query ($a: String) { workflows(after: $a) { id } }`, vars: { a: WORKFLOW_CURSOR } },
  { op: "queue", query: `query ($n: String!) { queue(name: $n) { name } }`, vars: { n: "default" } },
  { op: "webhookDeliveries", query: `query ($id: ID) { webhookDeliveries(webhookId: $id) { id } }`, vars: { id: "whk_x" } },
  { op: "createTenant", operator: true, query: `mutation ($n: String!) { createTenant(input: { name: $n }) { apiKey } }`, vars: { n: "tenant" } },
  { op: "updateTenant", operator: true, query: `mutation ($id: ID!) { updateTenant(id: $id, limits: { weight: 1 }) { id } }`, vars: { id: "ten_x" } },
];

/** Every string leaf of `value` as a path (keys and indexes). */
export function stringLeaves(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value === "string") return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringLeaves(v, [...path, i]));
  if (value !== null && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => stringLeaves(v, [...path, k]));
  return [];
}

/** A deep copy of `value` with the leaf at `path` replaced. */
export function replaceAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  if (Array.isArray(value)) return value.map((v, i) => (i === head ? replaceAt(v, rest, replacement) : v));
  const record = value as Record<string, unknown>;
  return { ...record, [String(head)]: replaceAt(record[String(head)], rest, replacement) };
}

/** Hostile cron expressions and time zones: each must be BAD_USER_INPUT. */
export const BAD_CRONS = [
  "* * * * *; DROP TABLE tasks",
  "$(reboot)",
  "`id`",
  "* * * * *\n* * * * *",
  "* * * * * * *",
  "61 * * * *",
  "* * 32 * *",
  "*/0 * * * *",
  "",
  " ",
  "0 0 * * * ' OR '1'='1",
  "x".repeat(10_000),
];

export const BAD_TIMEZONES = ["../../etc/passwd", "/etc/localtime", "UTC; DROP TABLE tasks", "Europe/Berlin\n", "Mars/Olympus_Mons", "file:///etc/passwd", "x".repeat(10_000), "+99:00"];

/** Hostile numbers, each on an otherwise valid call: BAD_USER_INPUT, nothing written. */
export const BAD_NUMBERS: Array<{ label: string; query: string; vars: Record<string, unknown>; operator?: boolean }> = [
  ...[-1, 1e308, 366 * 86_400 + 1].map((n) => ({ label: `delaySeconds ${n}`, query: `mutation ($n: Float) { submitTask(input: { type: "n", delaySeconds: $n }) { id } }`, vars: { n } })),
  ...[-1, 1e308, 366 * 86_400 + 1].map((n) => ({
    label: `rescheduleTask delaySeconds ${n}`,
    query: `mutation ($n: Float) { rescheduleTask(id: "${TASK_ID}", delaySeconds: $n) { id } }`,
    vars: { n },
  })),
  ...[-1, 0, 101, 2_147_483_647].map((n) => ({ label: `maxAttempts ${n}`, query: `mutation ($n: Int) { submitTask(input: { type: "n", maxAttempts: $n }) { id } }`, vars: { n } })),
  ...[-1, 0, 86_401, 2_147_483_647].map((n) => ({ label: `timeoutSeconds ${n}`, query: `mutation ($n: Int) { submitTask(input: { type: "n", timeoutSeconds: $n }) { id } }`, vars: { n } })),
  ...[-1, 1e308].map((n) => ({
    label: `backoff.delaySeconds ${n}`,
    query: `mutation ($n: Float!) { submitTask(input: { type: "n", backoff: { strategy: FIXED, delaySeconds: $n } }) { id } }`,
    vars: { n },
  })),
  {
    label: "backoff.maxDelaySeconds -1",
    query: `mutation { submitTask(input: { type: "n", backoff: { strategy: EXPONENTIAL, delaySeconds: 1, maxDelaySeconds: -1 } }) { id } }`,
    vars: {},
  },
  ...["+275760-09-13T00:00:00.001Z", "9999-12-31T23:59:59Z", "2030-02-30T00:00:00Z", "now"].map((runAt) => ({
    label: `runAt ${runAt}`,
    query: `mutation ($r: DateTime) { submitTask(input: { type: "n", runAt: $r }) { id } }`,
    vars: { r: runAt },
  })),
  ...[-1, 0].map((n) => ({ label: `queue concurrency ${n}`, query: `mutation ($n: Int) { upsertQueue(input: { name: "nq", mode: PULL, concurrency: $n }) { name } }`, vars: { n } })),
  ...[-1, 0, 1e308].map((n) => ({
    label: `rateLimit.perSecond ${n}`,
    query: `mutation ($n: Float!) { upsertQueue(input: { name: "nq", mode: PULL, rateLimit: { perSecond: $n } }) { name } }`,
    vars: { n },
  })),
  { label: "rateLimit.burst -1", query: `mutation { upsertQueue(input: { name: "nq", mode: PULL, rateLimit: { perSecond: 1, burst: -1 } }) { name } }`, vars: {} },
  ...[-1, 0, 1_000_000].map((n) => ({ label: `leaseTasks max ${n}`, query: `mutation ($n: Int) { leaseTasks(queue: "default", workerId: "w", max: $n) { leaseToken } }`, vars: { n } })),
  ...[-1, 0, 1_000_000_000].map((n) => ({
    label: `leaseSeconds ${n}`,
    query: `mutation ($n: Int) { leaseTasks(queue: "default", workerId: "w", leaseSeconds: $n) { leaseToken } }`,
    vars: { n },
  })),
  ...[-1, 1e9].map((n) => ({ label: `waitSeconds ${n}`, query: `mutation ($n: Float) { leaseTasks(queue: "default", workerId: "w", waitSeconds: $n) { leaseToken } }`, vars: { n } })),
  ...[-1, 1_001, 2_147_483_647].map((n) => ({
    label: `startAheadMs ${n}`,
    query: `mutation ($n: Int) { leaseTasks(queue: "default", workerId: "w", startAheadMs: $n) { leaseToken } }`,
    vars: { n },
  })),
  ...[-1, 0, 1e6, 2_147_483_647].map((n) => ({ label: `workflows first ${n}`, query: `query ($n: Int) { workflows(first: $n) { id } }`, vars: { n } })),
  ...(["weight", "apiBurst", "maxPendingTasks", "dailyTaskQuota", "maxConcurrency"] as const).map((field) => ({
    label: `tenant ${field} -1`,
    operator: true,
    query: `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { apiKey } }`,
    vars: { i: { name: "numbers", limits: { [field]: -1 } } },
  })),
  ...[-1, 1e308].map((n) => ({
    label: `tenant apiRatePerSecond ${n}`,
    operator: true,
    query: `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { apiKey } }`,
    vars: { i: { name: "numbers", limits: { apiRatePerSecond: n } } },
  })),
];

/** Raw JSON bodies whose numbers JSON.parse turns into something GraphQL must refuse. */
export const RAW_NUMBER_BODIES = [
  { label: "Infinity via 1e400", body: `{"query":"mutation ($n: Float) { submitTask(input: { type: \\"n\\", delaySeconds: $n }) { id } }","variables":{"n":1e400}}` },
  { label: "-Infinity via -1e400", body: `{"query":"mutation ($n: Float) { submitTask(input: { type: \\"n\\", delaySeconds: $n }) { id } }","variables":{"n":-1e400}}` },
  { label: "NaN as a string", body: `{"query":"mutation ($n: Float) { submitTask(input: { type: \\"n\\", delaySeconds: $n }) { id } }","variables":{"n":"NaN"}}` },
  { label: "2^53 + 1 as Int", body: `{"query":"mutation ($n: Int) { submitTask(input: { type: \\"n\\", maxAttempts: $n }) { id } }","variables":{"n":9007199254740993}}` },
  { label: "1.5 as Int", body: `{"query":"mutation ($n: Int) { submitTask(input: { type: \\"n\\", maxAttempts: $n }) { id } }","variables":{"n":1.5}}` },
  // JSON fields: encoding would have stored null in place of each (the caller's data changed silently).
  { label: "1e400 inside a payload", body: `{"query":"mutation ($p: JSON) { submitTask(input: { type: \\"n\\", payload: $p }) { id } }","variables":{"p":{"amount":1e400}}}` },
  { label: "-1e400 inside metadata", body: `{"query":"mutation ($m: JSON) { submitTask(input: { type: \\"n\\", metadata: $m }) { id } }","variables":{"m":{"list":[1,-1e400]}}}` },
  { label: "1e400 in a payload literal", body: `{"query":"mutation { submitTask(input: { type: \\"n\\", payload: { amount: 1e400 } }) { id } }"}` },
  { label: "1e400 in a schedule's payload", body: `{"query":"mutation ($p: JSON) { createSchedule(input: { name: \\"inf\\", cron: \\"0 0 1 1 *\\", task: { type: \\"n\\", payload: $p } }) { id } }","variables":{"p":{"x":1e400}}}` },
];
