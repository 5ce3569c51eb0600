import type pg from "pg";
import { prepared, withTransactionIfAny, type Database } from "../database.js";
import { taskBodyBytesSql } from "../tasks/page-body-budget.js";
import { TASK_COLUMNS, mapTaskRow, type TaskRecord } from "../tasks/task-record.js";
import { WORKFLOW_COLUMNS, mapWorkflowRow, type WorkflowRecord } from "../workflows/workflow-record.js";
import { planDeliveries, type NotifyEvent, type PlannedDelivery, type WebhookTarget } from "./plan-deliveries.js";
import { planWorkflowDeliveries, workflowEventOf } from "./plan-workflow-deliveries.js";

/** NOTIFY rows taken per transaction: big enough to drain bursts, small enough to keep the transaction short. */
export const NOTIFY_BATCH_SIZE = 200;
/**
 * Bytes of task payloads and results one transaction's events may carry, and
 * of delivery bodies one insert statement may send. Every delivery stores
 * its body (the task, payload and result of up to 256 KiB each, once per
 * webhook), and the insert sends them as one array: 200 events of such tasks
 * for 3 webhooks ran the notifier out of the heap a 1 GiB container gives it
 * (and, its events kept, again after every restart); for one webhook the
 * transaction took 15 s and 500 MB (session 45).
 */
export const FAN_OUT_BODY_BYTES = 4 * 1024 * 1024;

export interface FanOutResult {
  /** Outbox rows consumed. */
  events: number;
  /** webhook_deliveries rows created. */
  deliveries: number;
  /** More NOTIFY rows were due than this transaction took (its count or its bytes were full): go again at once. */
  more: boolean;
}

/** NOTIFY rows ready to fan out: the probe and the claim test the same thing. */
const NOTIFY_DUE = "kind = 'NOTIFY' AND available_at <= now()";
const ANY_NOTIFY_DUE = `SELECT 1 FROM outbox WHERE ${NOTIFY_DUE} LIMIT 1`;

/**
 * Turns NOTIFY outbox rows into webhook_deliveries rows, in one transaction:
 * the claim (DELETE of rows picked with SKIP LOCKED, so any number of
 * notifiers share the work), the deliveries insert, and the commit stand or
 * fall together. A crash before commit leaves the outbox rows for the next
 * claim; nothing is delivered twice under two different delivery ids.
 */
export async function fanOutNotifications(db: Database, limit = NOTIFY_BATCH_SIZE, bodyBytes = FAN_OUT_BODY_BYTES): Promise<FanOutResult> {
  return withTransactionIfAny(db.pool, prepared(ANY_NOTIFY_DUE, []), { events: 0, deliveries: 0, more: false }, async (client) => {
    // The oldest due rows, up to `limit`, and of those the first while their tasks' bodies fit in
    // `bodyBytes` (the first always): the rest stay, locked by this transaction only until it ends.
    const claimed = await client.query<{ tenant_id: string; task_id: string | null; payload: unknown; created_at: Date; candidates: number }>(
      `WITH candidate AS (
         SELECT id, task_id FROM outbox WHERE ${NOTIFY_DUE}
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED),
       measured AS (
         SELECT c.id, row_number() OVER w AS n, sum(COALESCE(${taskBodyBytesSql("t")}, 0)) OVER w AS through
         FROM candidate c LEFT JOIN tasks t ON t.id = c.task_id
         WINDOW w AS (ORDER BY c.id ROWS UNBOUNDED PRECEDING))
       DELETE FROM outbox o WHERE o.id IN (SELECT id FROM measured WHERE n = 1 OR through <= $2)
       RETURNING o.tenant_id, o.task_id, o.payload, o.created_at, (SELECT count(*)::int FROM candidate) AS candidates`,
      [limit, bodyBytes],
    );
    if (claimed.rows.length === 0) return { events: 0, deliveries: 0, more: false };
    const more = claimed.rows.length < (claimed.rows[0]?.candidates ?? 0) || claimed.rows.length === limit;
    const events: NotifyEvent[] = claimed.rows.map((r) => ({
      tenantId: r.tenant_id,
      taskId: r.task_id,
      payload: r.payload,
      createdAt: r.created_at,
    }));
    const tasks = await loadTasks(client, events);
    const webhooks = await loadWebhooks(client, [...new Set(events.map((e) => e.tenantId))]);
    const workflows = await loadWorkflows(client, events);
    const planned = [...planDeliveries(events, tasks, webhooks), ...planWorkflowDeliveries(events, workflows, webhooks)];
    for (const chunk of chunksOfBodyBytes(planned, bodyBytes)) await insertDeliveries(client, chunk);
    return { events: events.length, deliveries: planned.length, more };
  });
}

async function loadTasks(client: pg.PoolClient, events: NotifyEvent[]): Promise<Map<string, TaskRecord>> {
  const ids = [...new Set(events.flatMap((e) => (e.taskId === null ? [] : [e.taskId])))];
  const res = await client.query(`SELECT ${TASK_COLUMNS} FROM tasks t JOIN queues q ON q.id = t.queue_id WHERE t.id = ANY($1::text[])`, [ids]);
  return new Map(res.rows.map((r) => [r.id as string, mapTaskRow(r)]));
}

async function loadWorkflows(client: pg.PoolClient, events: NotifyEvent[]): Promise<Map<string, WorkflowRecord>> {
  const ids = [...new Set(events.flatMap((e) => workflowEventOf(e)?.workflowId ?? []))];
  if (ids.length === 0) return new Map();
  const res = await client.query(`SELECT ${WORKFLOW_COLUMNS} FROM workflows w WHERE w.id = ANY($1::text[])`, [ids]);
  return new Map(res.rows.map((r) => [r.id as string, mapWorkflowRow(r)]));
}

async function loadWebhooks(client: pg.PoolClient, tenantIds: string[]): Promise<Map<string, WebhookTarget[]>> {
  const res = await client.query<{ id: string; tenant_id: string; url: string; events: string[] }>(
    `SELECT id, tenant_id, url, events FROM webhooks
     WHERE tenant_id = ANY($1::text[]) AND enabled AND deleted_at IS NULL ORDER BY id`,
    [tenantIds],
  );
  const byTenant = new Map<string, WebhookTarget[]>();
  for (const r of res.rows) {
    const list = byTenant.get(r.tenant_id) ?? [];
    list.push({ id: r.id, tenantId: r.tenant_id, url: r.url, events: r.events });
    byTenant.set(r.tenant_id, list);
  }
  return byTenant;
}

/** `planned` in runs whose bodies add up to at most `bytes` (a longer body alone in its run). */
export function* chunksOfBodyBytes(planned: readonly PlannedDelivery[], bytes: number): Generator<PlannedDelivery[]> {
  let chunk: PlannedDelivery[] = [];
  let size = 0;
  for (const delivery of planned) {
    if (chunk.length > 0 && size + delivery.body.length > bytes) {
      yield chunk;
      chunk = [];
      size = 0;
    }
    chunk.push(delivery);
    size += delivery.body.length;
  }
  if (chunk.length > 0) yield chunk;
}

/** One multi-row insert (unnest of column arrays): a run of chunksOfBodyBytes is one round trip, not one per delivery. */
async function insertDeliveries(client: pg.PoolClient, planned: PlannedDelivery[]): Promise<void> {
  if (planned.length === 0) return;
  await client.query(
    `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, task_id, body, workflow_id)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[])`,
    [
      planned.map((d) => d.id),
      planned.map((d) => d.tenantId),
      planned.map((d) => d.webhookId),
      planned.map((d) => d.url),
      planned.map((d) => d.event),
      planned.map((d) => d.taskId),
      planned.map((d) => d.body),
      planned.map((d) => d.workflowId),
    ],
  );
}
