/**
 * The tenant isolation matrix (test/integration/tenancy-isolation.test.ts):
 * every contract operation that can name another tenant's object, called by
 * tenant B with A's references and with references to nothing at all. The two
 * answers must be identical once each reference is replaced by its role.
 *
 * Adding a row: one entry in CASES (or OWN_ONLY for operations without a
 * reference). The test fails when an operation the gateway serves (the
 * contract's and every one beyond it) has no entry.
 */
import { IdPrefix, newId } from "@tasklane/core";
import { randomSuffix } from "./platform.js";

/** Everything of tenant A another tenant could try to reach. */
export interface Refs {
  tenantId: string;
  taskId: string;
  runningTaskId: string;
  leaseToken: string;
  deadTaskId: string;
  queue: string;
  scheduleId: string;
  apiKeyId: string;
  webhookId: string;
  workflowId: string;
  idempotencyKey: string;
  orderingKey: string;
  /** A FAILED delivery to A's webhook (when A has one). */
  deliveryId: string;
  /** A's console user's email. */
  consoleEmail: string;
}

/** Optional features: rows that need one are skipped while A could not create it. */
export type Feature = "webhooks" | "workflows";

export interface IsolationCase {
  op: string;
  requires?: Feature;
  query: string;
  vars(r: Refs): Record<string, unknown>;
}

/** References to objects that exist nowhere (well-formed, so the answer is not a shape error). */
export function missingRefs(): Refs {
  return {
    tenantId: newId(IdPrefix.tenant),
    taskId: newId(IdPrefix.task),
    runningTaskId: newId(IdPrefix.task),
    leaseToken: `lt_1_${randomSuffix(16)}`,
    deadTaskId: newId(IdPrefix.task),
    queue: `missing-${randomSuffix(4)}`,
    scheduleId: newId(IdPrefix.schedule),
    apiKeyId: newId(IdPrefix.apiKey),
    webhookId: newId(IdPrefix.webhook),
    workflowId: newId(IdPrefix.workflow),
    idempotencyKey: `idem-${randomSuffix(6)}`,
    orderingKey: `order-${randomSuffix(6)}`,
    deliveryId: newId(IdPrefix.delivery),
    consoleEmail: `missing-${randomSuffix(6)}@example.com`,
  };
}

/** Replaces every reference in an answer by its role, so A's and the missing refs compare equal. */
export function normalize(answer: unknown, refs: Refs): string {
  let text = JSON.stringify(answer);
  const entries = Object.entries(refs)
    .filter(([, value]) => value.length > 0)
    .sort(([, a], [, b]) => b.length - a.length);
  for (const [role, value] of entries) text = text.split(value).join(`<${role}>`);
  return text;
}

const TASK_FIELDS = "id status";

/** Ordered: rows that create B's own objects come last. */
export const CASES: IsolationCase[] = [
  { op: "task", query: `query ($id: ID!) { task(id: $id) { ${TASK_FIELDS} } }`, vars: (r) => ({ id: r.taskId }) },
  { op: "tasks", query: `query ($f: TaskFilter) { tasks(filter: $f) { totalCount nodes { id } } }`, vars: (r) => ({ f: { queue: r.queue } }) },
  { op: "tasks", query: `query ($f: TaskFilter) { tasks(filter: $f) { totalCount } }`, vars: (r) => ({ f: { scheduleId: r.scheduleId } }) },
  { op: "tasks", requires: "workflows", query: `query ($f: TaskFilter) { tasks(filter: $f) { totalCount } }`, vars: (r) => ({ f: { workflowId: r.workflowId } }) },
  { op: "deadLetterTasks", query: `query ($q: String) { deadLetterTasks(queue: $q) { totalCount nodes { id } } }`, vars: (r) => ({ q: r.queue }) },
  { op: "schedule", query: `query ($id: ID!) { schedule(id: $id) { id name } }`, vars: (r) => ({ id: r.scheduleId }) },
  { op: "workflow", requires: "workflows", query: `query ($id: ID!) { workflow(id: $id) { id status } }`, vars: (r) => ({ id: r.workflowId }) },
  { op: "queue", query: `query ($n: String!) { queue(name: $n) { name } }`, vars: (r) => ({ n: r.queue }) },
  { op: "webhookDeliveries", requires: "webhooks", query: `query ($id: ID) { webhookDeliveries(webhookId: $id) { id } }`, vars: (r) => ({ id: r.webhookId }) },
  { op: "updateTenant", query: `mutation ($id: ID!) { updateTenant(id: $id, limits: { weight: 9 }) { id } }`, vars: (r) => ({ id: r.tenantId }) },
  { op: "revokeApiKey", query: `mutation ($id: ID!) { revokeApiKey(id: $id) { id revokedAt } }`, vars: (r) => ({ id: r.apiKeyId }) },
  { op: "cancelTask", query: `mutation ($id: ID!) { cancelTask(id: $id) { ${TASK_FIELDS} } }`, vars: (r) => ({ id: r.taskId }) },
  { op: "cancelTask", query: `mutation ($id: ID!) { cancelTask(id: $id) { ${TASK_FIELDS} } }`, vars: (r) => ({ id: r.runningTaskId }) },
  { op: "redriveTask", query: `mutation ($id: ID!) { redriveTask(id: $id) { ${TASK_FIELDS} } }`, vars: (r) => ({ id: r.deadTaskId }) },
  { op: "rescheduleTask", query: `mutation ($id: ID!) { rescheduleTask(id: $id) { ${TASK_FIELDS} } }`, vars: (r) => ({ id: r.taskId }) },
  { op: "discardTask", query: `mutation ($id: ID!) { discardTask(id: $id) { ${TASK_FIELDS} } }`, vars: (r) => ({ id: r.deadTaskId }) },
  { op: "replayTask", query: `mutation ($id: ID!) { replayTask(id: $id) { ${TASK_FIELDS} replayOf } }`, vars: (r) => ({ id: r.deadTaskId }) },
  {
    op: "completeTasks",
    query: `mutation ($id: ID!, $t: String!) { completeTasks(completions: [{ taskId: $id, leaseToken: $t, result: 1 }]) { taskId accepted code task { ${TASK_FIELDS} } } }`,
    vars: (r) => ({ id: r.runningTaskId, t: r.leaseToken }),
  },
  {
    op: "heartbeat",
    query: `mutation ($id: ID!, $t: String!) { heartbeat(taskId: $id, leaseToken: $t, extendSeconds: 600) { leaseExpiresAt } }`,
    vars: (r) => ({ id: r.runningTaskId, t: r.leaseToken }),
  },
  {
    op: "completeTask",
    query: `mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t, result: 1) { ${TASK_FIELDS} } }`,
    vars: (r) => ({ id: r.runningTaskId, t: r.leaseToken }),
  },
  {
    op: "failTask",
    query: `mutation ($id: ID!, $t: String!) { failTask(taskId: $id, leaseToken: $t, error: "x", retryable: false) { ${TASK_FIELDS} } }`,
    vars: (r) => ({ id: r.runningTaskId, t: r.leaseToken }),
  },
  { op: "updateSchedule", query: `mutation ($id: ID!) { updateSchedule(id: $id, input: { enabled: false }) { id } }`, vars: (r) => ({ id: r.scheduleId }) },
  { op: "triggerSchedule", query: `mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`, vars: (r) => ({ id: r.scheduleId }) },
  { op: "deleteSchedule", query: `mutation ($id: ID!) { deleteSchedule(id: $id) }`, vars: (r) => ({ id: r.scheduleId }) },
  { op: "cancelWorkflow", requires: "workflows", query: `mutation ($id: ID!) { cancelWorkflow(id: $id) { id status } }`, vars: (r) => ({ id: r.workflowId }) },
  {
    op: "updateWebhook",
    requires: "webhooks",
    query: `mutation ($id: ID!) { updateWebhook(id: $id, input: { url: "https://hooks.example.com/b", events: ["*"], enabled: false }) { id enabled } }`,
    vars: (r) => ({ id: r.webhookId }),
  },
  { op: "rotateWebhookSecret", requires: "webhooks", query: `mutation ($id: ID!) { rotateWebhookSecret(id: $id) { webhook { id } secret } }`, vars: (r) => ({ id: r.webhookId }) },
  {
    op: "redeliverWebhookDeliveries",
    requires: "webhooks",
    query: `mutation ($id: ID!) { redeliverWebhookDeliveries(webhookId: $id, since: "2000-01-01T00:00:00Z") }`,
    vars: (r) => ({ id: r.webhookId }),
  },
  { op: "redeliverWebhookDelivery", requires: "webhooks", query: `mutation ($id: ID!) { redeliverWebhookDelivery(id: $id) { id status } }`, vars: (r) => ({ id: r.deliveryId }) },
  { op: "deleteWebhook", requires: "webhooks", query: `mutation ($id: ID!) { deleteWebhook(id: $id) }`, vars: (r) => ({ id: r.webhookId }) },
  { op: "pauseQueue", query: `mutation ($n: String!) { pauseQueue(name: $n) { name paused } }`, vars: (r) => ({ n: r.queue }) },
  { op: "resumeQueue", query: `mutation ($n: String!) { resumeQueue(name: $n) { name paused } }`, vars: (r) => ({ n: r.queue }) },
  // Beyond the contract: another tenant's queue is NOT_FOUND like a missing one, and nothing of it is cancelled or deleted.
  { op: "purgeQueue", query: `mutation ($n: String!) { purgeQueue(name: $n) { name } }`, vars: (r) => ({ n: r.queue }) },
  { op: "deleteQueue", query: `mutation ($n: String!) { deleteQueue(name: $n) }`, vars: (r) => ({ n: r.queue }) },
  { op: "redriveDeadLetterTasks", query: `mutation ($n: String) { redriveDeadLetterTasks(queue: $n) { count hasMore } }`, vars: (r) => ({ n: `${r.queue}-dead` }) },
  { op: "discardDeadLetterTasks", query: `mutation ($n: String) { discardDeadLetterTasks(queue: $n) { count hasMore } }`, vars: (r) => ({ n: `${r.queue}-dead` }) },
  // Operator and console sign-in calls: an API key is no operator, and A's console email signs in no better than none.
  { op: "createConsoleUser", query: `mutation ($t: ID!) { createConsoleUser(tenantId: $t, email: "b@example.com", password: "correct horse battery") { id } }`, vars: (r) => ({ t: r.tenantId }) },
  { op: "consoleSignIn", query: `mutation ($e: String!) { consoleSignIn(email: $e, password: "not the password") { apiKeyId } }`, vars: (r) => ({ e: r.consoleEmail }) },
  { op: "leaseTasks", query: `mutation ($n: String!) { leaseTasks(queue: $n, workerId: "b", max: 10) { leaseToken task { id } } }`, vars: (r) => ({ n: r.queue }) },
  { op: "submitTask", query: `mutation ($n: String) { submitTask(input: { type: "x", queue: $n }) { id } }`, vars: (r) => ({ n: r.queue }) },
  { op: "submitTasks", query: `mutation ($n: String) { submitTasks(inputs: [{ type: "x" }, { type: "y", queue: $n }]) { id } }`, vars: (r) => ({ n: r.queue }) },
  {
    op: "submitWorkflow",
    requires: "workflows",
    query: `mutation ($n: String) { submitWorkflow(input: { name: "w", tasks: [{ key: "k", type: "x", queue: $n }] }) { id } }`,
    vars: (r) => ({ n: r.queue }),
  },
  {
    op: "createSchedule",
    query: `mutation ($name: String!, $n: String) { createSchedule(input: { name: $name, cron: "0 0 1 1 *", task: { type: "x", queue: $n } }) { name enabled } }`,
    vars: (r) => ({ name: `s-${r.queue}`, n: r.queue }),
  },
  // Keys and names are per tenant: B gets its own object, never A's, and A's is untouched.
  {
    op: "submitTask",
    query: `mutation ($k: String) { submitTask(input: { type: "x", idempotencyKey: $k }) { type status idempotencyKey } }`,
    vars: (r) => ({ k: r.idempotencyKey }),
  },
  {
    op: "submitTask",
    query: `mutation ($k: String) { submitTask(input: { type: "x", orderingKey: $k }) { type status orderingKey } }`,
    vars: (r) => ({ k: r.orderingKey }),
  },
  {
    op: "upsertQueue",
    query: `mutation ($n: String!) { upsertQueue(input: { name: $n, mode: PULL }) { name mode paused stats { queued running dead } } }`,
    vars: (r) => ({ n: r.queue }),
  },
];

/** Operations without a reference to pass: B's answers must simply not mention anything of A's. */
export const OWN_ONLY: Array<{ op: string; query: string }> = [
  { op: "tenant", query: `{ tenant { id name usage { pendingTasks runningTasks submittedToday } } }` },
  { op: "tasks", query: `{ tasks(first: 500) { totalCount nodes { id queue idempotencyKey orderingKey } } }` },
  { op: "schedules", query: `{ schedules { id name } }` },
  { op: "workflows", query: `{ workflows(first: 500) { id name } }` },
  { op: "queues", query: `{ queues { name } }` },
  { op: "webhooks", query: `{ webhooks { id url } }` },
  { op: "webhookDeliveries", query: `{ webhookDeliveries(first: 500) { id webhookId taskId } }` },
  { op: "apiKeys", query: `{ apiKeys { id name prefix } }` },
  { op: "queueActivity", query: `{ queueActivity { queue buckets { succeeded } } }` },
  // Without a queue: every queue of the caller's, never another tenant's dead tasks (the snapshot of A's rows shows it).
  { op: "redriveDeadLetterTasks", query: `mutation { redriveDeadLetterTasks { count hasMore } }` },
  { op: "discardDeadLetterTasks", query: `mutation { discardDeadLetterTasks { count hasMore } }` },
  { op: "createApiKey", query: `mutation { createApiKey(name: "b-key") { apiKey { id } secret } }` },
  { op: "rotateSigningSecret", query: `mutation { rotateSigningSecret }` },
  { op: "createWebhook", query: `mutation { createWebhook(input: { url: "https://hooks.example.com/b", events: ["*"] }) { webhook { id } } }` },
  { op: "createTenant", query: `mutation { createTenant(input: { name: "b-made" }) { tenant { id } } }` },
];

/** Subscriptions are exercised over graphql-ws by the test itself. */
export const SUBSCRIPTIONS = ["taskUpdated", "workflowUpdated"];
