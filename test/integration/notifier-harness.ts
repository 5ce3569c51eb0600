/**
 * Arrangements shared by the notifier-*.test.ts files: a tenant with a known
 * signing secret, webhook rows (the gateway's webhook API is not wired yet),
 * tasks made terminal through the real transition functions (so the NOTIFY
 * outbox rows are exactly what production writes), and a Standard Webhooks
 * verifier written from the spec, independent of packages/core.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { DEFAULT_BACKOFF, generateSigningSecret, newId, type TaskSpec } from "@tasklane/core";
import { cancelTask, completeAttempts, failAttempt, startAttemptsFromQueue, submitTasks, type Database } from "@tasklane/db";

export interface Tenant {
  tenantId: string;
  queueId: string;
  secret: string;
}

export async function seedNotifierTenant(db: Database, previousSecret?: string): Promise<Tenant> {
  const tenantId = newId("ten");
  const queueId = newId("que");
  const secret = generateSigningSecret();
  await db.pool.query(
    `INSERT INTO tenants (id, name, signing_secret, previous_signing_secret, previous_secret_expires_at)
     VALUES ($1, $1, $2, $3::text, CASE WHEN $3::text IS NULL THEN NULL ELSE now() + interval '1 hour' END)`,
    [tenantId, secret, previousSecret ?? null],
  );
  await db.pool.query("INSERT INTO queues (id, tenant_id, name, mode) VALUES ($1, $2, 'default', 'PULL')", [queueId, tenantId]);
  return { tenantId, queueId, secret };
}

export async function addWebhook(db: Database, tenantId: string, url: string, events: string[]): Promise<{ id: string; secret: string }> {
  const id = newId("whk");
  const secret = generateSigningSecret();
  await db.pool.query("INSERT INTO webhooks (id, tenant_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)", [id, tenantId, url, events, secret]);
  return { id, secret };
}

export type Ending = "succeed" | "dead" | "cancel";

/** A one-attempt task on the default queue, as the API would normalise it; `overrides` on top. */
export function taskSpec(overrides: Partial<TaskSpec> = {}): TaskSpec {
  return {
    type: "report.build",
    queue: "default",
    payload: { n: randomBytes(2).toString("hex") },
    priority: "NORMAL",
    runAt: new Date(),
    maxAttempts: 1,
    backoff: { ...DEFAULT_BACKOFF },
    timeoutSeconds: 60,
    idempotencyKey: null,
    orderingKey: null,
    callbackUrl: null,
    metadata: null,
    ...overrides,
  };
}

/** Submits one task and drives it to a terminal status with the transition module, as a pull worker would. */
export async function finishTask(db: Database, t: Tenant, ending: Ending, callbackUrl: string | null = null): Promise<string> {
  const { tasks } = await submitTasks(db, t.tenantId, [taskSpec({ callbackUrl })], { horizonMs: 0, actor: "test" });
  const taskId = tasks[0]?.id ?? "";
  if (ending === "cancel") {
    await cancelTask(db, t.tenantId, taskId, "test");
    return taskId;
  }
  const [started] = await startAttemptsFromQueue(db, t.queueId, 1, 60, { workerId: "test", leaseMs: 30_000, actor: "test" });
  if (started?.task.id !== taskId) throw new Error("the task just submitted was not the one started");
  const gen = started.task.leaseGeneration;
  const result =
    ending === "succeed"
      ? await completeAttempts(db, [{ taskId, leaseGeneration: gen, result: { rows: 3 } }], "test")
      : await failAttempt(db, { taskId, leaseGeneration: gen, error: "boom", outcome: "FAILED", decision: { kind: "dead", reason: "exhausted" } }, "test", 0);
  if (result.accepted.length !== 1) throw new Error(`could not ${ending} ${taskId}`);
  return taskId;
}

export interface DeliveryRow {
  id: string;
  webhook_id: string | null;
  url: string;
  event: string;
  status: string;
  attempts: number;
  last_response_code: number | null;
  last_error: string | null;
  body: string;
}

export async function deliveriesOf(db: Database, taskId: string): Promise<DeliveryRow[]> {
  const res = await db.pool.query<DeliveryRow>(
    `SELECT id, webhook_id, url, event, status, attempts, last_response_code, last_error, body
     FROM webhook_deliveries WHERE task_id = $1 ORDER BY created_at, id`,
    [taskId],
  );
  return res.rows;
}

const header = (h: IncomingHttpHeaders, name: string): string => {
  const v = h[name];
  return typeof v === "string" ? v : "";
};

/**
 * Standard Webhooks verification from the spec: HMAC-SHA256 keyed with the
 * base64 part of "whsec_…" over "id.timestamp.body", base64, compared with
 * every space-separated "v1,<sig>"; timestamp within five minutes.
 */
export function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return signatures.split(" ").some((s) => s === `v1,${expected}`);
}
