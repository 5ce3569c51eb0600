/**
 * What the hot path costs Postgres, and nothing else: one process drives the
 * db package's own transition functions over one connection, in sequence
 * (submit in batches of 500, PUSH start by 25, completion by 60, the sizes
 * s1 PUSH runs at), and reads that connection's backend CPU from /proc around
 * each phase. No other process competes for the cores and no event loop
 * queues, so the figure follows the statements' shape rather than the
 * machine's minute: the instrument for a change to what a transition writes,
 * whose effect the end-to-end runs' spread (±20%) hides.
 *
 *   npm run build && node test/bench/dist/micro/pg-hot-path.js [--tasks 20000] [--rounds 5] [--setup <sql>]…
 *
 * `--setup` runs SQL on the fresh database after the migrations, to try a
 * schema variant without a migration (drop an index, disable a trigger).
 * This machine's speed still drifts from minute to minute: compare variants
 * in alternating invocations, and when only start or completion changes, read
 * them against the submit phase of the same invocation, which did not.
 */
import { parseArgs } from "node:util";
import { IdPrefix, newId, normalizeTaskSpec, parseInput, submitTaskInputSchema, type TaskSpec } from "@tasklane/core";
import { applyMigrations, completeAttemptsQuietly, createDatabase, startAttemptsByIds, submitTaskRefs, type Database } from "@tasklane/db";
import { cpuMsOf } from "../lib/cpu.js";
import { createBenchDatabase } from "../lib/postgres.js";
import { spread } from "../lib/stats.js";

const SUBMIT_BATCH = 500;
const START_BATCH = 25;
const COMPLETE_BATCH = 60;
const WORKER = "pg-hot-path";

type Phase = "submit" | "start" | "complete";
const PHASES: Phase[] = ["submit", "start", "complete"];

/** The backend's CPU so far in µs (/proc counts in ticks of 10 ms: a round of 20,000 tasks reads to 0.5 µs a task). */
async function backendCpuMicros(pid: number): Promise<number> {
  const ms = await cpuMsOf(pid);
  if (ms === undefined) throw new Error(`Postgres backend ${pid} is gone`);
  return ms * 1000;
}

/** A no-op task as the API stores one: the submit input through the gateway's own parsing and defaults. */
function specs(n: number): TaskSpec[] {
  const base = normalizeTaskSpec(parseInput(submitTaskInputSchema, { type: "noop", queue: "default" }), Date.now());
  return Array.from({ length: n }, (_, i) => ({ ...base, payload: { i } }));
}

function chunks<T>(items: T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));
}

/** One round: `tasks` tasks through submit, start and completion; µs of backend CPU per task for each. */
async function round(db: Database, pid: number, tenantId: string, tasks: number): Promise<Record<Phase, number>> {
  const cpu = {} as Record<Phase, number>;
  let mark = await backendCpuMicros(pid);
  const lap = async (phase: Phase) => {
    const now = await backendCpuMicros(pid);
    cpu[phase] = (now - mark) / tasks;
    mark = now;
  };
  const ids: string[] = [];
  for (const batch of chunks(specs(tasks), SUBMIT_BATCH)) {
    const { tasks: refs } = await submitTaskRefs(db, tenantId, batch, { horizonMs: 300_000, actor: WORKER });
    ids.push(...refs.map((r) => r.id));
  }
  await lap("submit");
  const started: { taskId: string; leaseGeneration: number }[] = [];
  for (const batch of chunks(ids, START_BATCH)) {
    const attempts = await startAttemptsByIds(db, batch, { workerId: WORKER, leaseMs: { timeoutPlusMs: 15_000 }, actor: WORKER });
    started.push(...attempts.map((a) => ({ taskId: a.task.id, leaseGeneration: a.task.leaseGeneration })));
  }
  await lap("start");
  if (started.length !== tasks) throw new Error(`started ${started.length} of ${tasks} tasks`);
  for (const batch of chunks(started, COMPLETE_BATCH)) {
    const { refused } = await completeAttemptsQuietly(db, batch.map((s) => ({ ...s, result: null, workflowId: null })), WORKER);
    if (refused.length > 0) throw new Error(`${refused.length} completions refused`);
  }
  await lap("complete");
  return cpu;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { tasks: { type: "string", default: "20000" }, rounds: { type: "string", default: "5" }, setup: { type: "string", multiple: true, default: [] } },
  });
  const tasks = Number(values.tasks);
  const rounds = Number(values.rounds);
  if (!Number.isInteger(tasks) || tasks < COMPLETE_BATCH || !Number.isInteger(rounds) || rounds < 1) {
    throw new Error(`--tasks must be a whole number of at least ${COMPLETE_BATCH}, --rounds at least 1`);
  }
  const bench = await createBenchDatabase();
  // One connection: every statement runs on the backend whose CPU is read.
  const db = createDatabase({ url: bench.url, max: 1, applicationName: "pg-hot-path" });
  try {
    await applyMigrations(bench.url);
    for (const sql of values.setup) await bench.pool.query(sql);
    const tenantId = newId(IdPrefix.tenant);
    await db.pool.query("INSERT INTO tenants (id, name, signing_secret) VALUES ($1, $1, 'whsec_unused')", [tenantId]);
    await db.pool.query("INSERT INTO queues (id, tenant_id, name, mode, endpoint_url) VALUES ($1, $2, 'default', 'PUSH', 'http://127.0.0.1:9/')", [newId(IdPrefix.queue), tenantId]);
    const pid = Number((await db.pool.query("SELECT pg_backend_pid() AS pid")).rows[0].pid);
    process.stdout.write(`pg-hot-path: ${tasks} tasks per round, ${rounds} rounds after a warm-up; Postgres backend CPU, µs per task\n`);
    await round(db, pid, tenantId, Math.min(tasks, 5_000));
    const results: Record<Phase, number>[] = [];
    for (let i = 0; i < rounds; i++) {
      const r = await round(db, pid, tenantId, tasks);
      results.push(r);
      process.stdout.write(`round ${i + 1}/${rounds}: ${PHASES.map((p) => `${p} ${r[p].toFixed(1)}`).join(" · ")} · total ${(r.submit + r.start + r.complete).toFixed(1)}\n`);
    }
    const med = (f: (r: Record<Phase, number>) => number) => spread(results.map(f)).median.toFixed(1);
    process.stdout.write(`median: ${PHASES.map((p) => `${p} ${med((r) => r[p])}`).join(" · ")} · total ${med((r) => r.submit + r.start + r.complete)}\n`);
  } finally {
    await db.close();
    await bench.drop();
  }
}

await main();
