import type pg from "pg";
import { prepared, withTransactionIfAny, type Database } from "../database.js";
import { TASK_COLUMNS, mapTaskRow, type TaskRecord } from "../tasks/task-record.js";
import { WORKFLOW_COLUMNS, mapWorkflowRow, type WorkflowRecord } from "../workflows/workflow-record.js";
import { planDeliveries, type NotifyEvent, type PlannedDelivery, type WebhookTarget } from "./plan-deliveries.js";
import { planWorkflowDeliveries, workflowEventOf } from "./plan-workflow-deliveries.js";

/** NOTIFY rows taken per transaction: big enough to drain bursts, small enough to keep the transaction short. */
export const NOTIFY_BATCH_SIZE = 200;

export interface FanOutResult {
  /** Outbox rows consumed. */
  events: number;
  /** webhook_deliveries rows created. */
  deliveries: number;
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
export async function fanOutNotifications(db: Database, limit = NOTIFY_BATCH_SIZE): Promise<FanOutResult> {
  return withTransactionIfAny(db.pool, prepared(ANY_NOTIFY_DUE, []), { events: 0, deliveries: 0 }, async (client) => {
    const claimed = await client.query<{ tenant_id: string; task_id: string | null; payload: unknown; created_at: Date }>(
      `DELETE FROM outbox o WHERE o.id IN (
         SELECT id FROM outbox WHERE ${NOTIFY_DUE}
         ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING o.tenant_id, o.task_id, o.payload, o.created_at`,
      [limit],
    );
    if (claimed.rows.length === 0) return { events: 0, deliveries: 0 };
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
    await insertDeliveries(client, planned);
    return { events: events.length, deliveries: planned.length };
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

/** One multi-row insert (unnest of column arrays): a 200-event burst is one round trip, not hundreds. */
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
