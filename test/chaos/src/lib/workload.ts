/**
 * Load for a scenario: submissions through the gateway (every task carries an
 * idempotency key equal to its item name, so a client can retry through any
 * fault without creating a second task), the wait for the platform to drain,
 * and the final state read back from Postgres into the history.
 */
import type { Database } from "@tasklane/db";
import { gql, untilAnswered } from "./api.js";
import type { Cluster, Tenant } from "./cluster.js";
import type { Mode } from "./endpoint.js";
import { sleep } from "./wait.js";

export interface ItemSpec {
  item: string;
  queue: string;
  /** "crash" is for PULL tasks: the pull worker fixture exits when it leases one. */
  mode?: Mode | "crash";
  delayMs?: number;
  expect?: "succeed" | "dead";
  maxAttempts?: number;
  timeoutSeconds?: number;
  runAt?: string;
  delaySeconds?: number;
}

const SUBMIT = `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`;

const toInput = (s: ItemSpec) => ({
  type: `chaos.${s.mode ?? "ok"}`,
  queue: s.queue,
  payload: { item: s.item, ...(s.mode ? { mode: s.mode } : {}), ...(s.delayMs !== undefined ? { delayMs: s.delayMs } : {}) },
  idempotencyKey: s.item,
  maxAttempts: s.maxAttempts ?? 20,
  timeoutSeconds: s.timeoutSeconds ?? 5,
  backoff: { strategy: "FIXED", delaySeconds: 0.2, jitter: false },
  ...(s.runAt !== undefined ? { runAt: s.runAt } : {}),
  ...(s.delaySeconds !== undefined ? { delaySeconds: s.delaySeconds } : {}),
});

/**
 * Submits in batches with `parallel` clients; each batch is retried until it
 * is answered (bounded), and only then are its items recorded as accepted.
 */
export async function submitItems(cluster: Cluster, tenant: Tenant, specs: ItemSpec[], batch = 500, parallel = 2): Promise<void> {
  const batches: ItemSpec[][] = [];
  for (let i = 0; i < specs.length; i += batch) batches.push(specs.slice(i, i + batch));
  let next = 0;
  const client = async () => {
    while (next < batches.length) {
      const b = batches[next++]!;
      const data = await untilAnswered(
        () => gql<{ submitTasks: { id: string }[] }>(cluster.gatewayUrl, SUBMIT, { i: b.map(toInput) }, tenant.apiKey, 60_000),
        cluster.tally,
        "submitTasks",
      );
      data.submitTasks.forEach((t, i) => {
        const s = b[i]!;
        cluster.history.record({ kind: "submit", item: s.item, ref: t.id, ...(s.expect ? { expect: s.expect } : {}) });
      });
    }
  };
  await Promise.all(Array.from({ length: parallel }, client));
}

const TERMINAL = `('SUCCEEDED','DEAD','CANCELLED','SKIPPED')`;

/** Waits (bounded) until no task is unfinished; returns false on timeout (the checker then reports what is lost). */
export async function drain(db: Database, timeoutMs: number, onProgress?: (left: number) => void): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let lastReport = 0;
  while (Date.now() < deadline) {
    const left = await db.pool
      .query<{ n: number }>(`SELECT count(*)::int AS n FROM tasks WHERE status NOT IN ${TERMINAL}`)
      .then((r) => r.rows[0]!.n)
      .catch(() => -1);
    if (left === 0) return true;
    if (onProgress && Date.now() - lastReport > 5_000) {
      lastReport = Date.now();
      onProgress(left);
    }
    await sleep(250);
  }
  return false;
}

/**
 * Reads every task and attempt into the history: starts (with their fencing
 * generation), attempt outcomes, and each item's final state.
 * `itemOf` names a task's item; by default its payload's `item`.
 */
export async function recordFinalState(
  cluster: Cluster,
  itemOf?: (row: { id: string; item: string | null; status: string; schedule_id: string | null; run_at: Date }) => string | undefined,
): Promise<void> {
  const { db } = cluster.database;
  const tasks = await db.pool.query<{ id: string; item: string | null; status: string; schedule_id: string | null; run_at: Date }>(
    `SELECT id, payload->>'item' AS item, status, schedule_id, run_at FROM tasks`,
  );
  const items = new Map<string, string>();
  for (const t of tasks.rows) {
    const item = itemOf ? itemOf(t) : (t.item ?? t.id);
    if (item === undefined) continue;
    items.set(t.id, item);
    cluster.history.record({ kind: "final", item, status: t.status, ref: t.id });
  }
  const attempts = await db.pool.query<{ task_id: string; number: number; worker_id: string | null; lease_token: string | null; started_at: Date; finished_at: Date | null; outcome: string | null }>(
    `SELECT task_id, number, worker_id, lease_token, started_at, finished_at, outcome FROM task_attempts ORDER BY id`,
  );
  for (const a of attempts.rows) {
    const item = items.get(a.task_id);
    if (item === undefined) continue;
    const generation = Number(/^lt_(\d+)_/.exec(a.lease_token ?? "")?.[1] ?? a.number);
    cluster.history.record({ kind: "start", at: a.started_at.getTime(), item, attempt: a.number, generation, workerId: a.worker_id ?? "unknown" });
    if (a.outcome !== null)
      cluster.history.record({ kind: "outcome", at: (a.finished_at ?? a.started_at).getTime(), item, attempt: a.number, outcome: a.outcome, ...(a.worker_id ? { workerId: a.worker_id } : {}) });
  }
}
