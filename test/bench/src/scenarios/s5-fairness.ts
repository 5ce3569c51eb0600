/**
 * 5. Fairness: tenant A has a backlog of 100,000 queued tasks when the
 * consumers start; tenant B then submits one task every 10 ms. B's queue
 * wait = handler start − the moment the system accepted B's task (Tasklane:
 * its created_at in Postgres); B's submit→start adds the API call. Contrast: raw BullMQ
 * with both tenants on one shared queue (what a single-tenant queue gives you).
 */
import { CONSUMER_CONCURRENCY } from "../lib/concurrency.js";
import { drivePaced, submitAll, warmUp, type Acked } from "../lib/drive.js";
import { withPeer } from "../lib/peers.js";
import { withPlatform } from "../lib/platform.js";
import { Probe, type StartSample } from "../lib/probe.js";
import { fmt, log, Ticker } from "../lib/progress.js";
import { FigureSet } from "../lib/results.js";
import { runLabel, type Scenario, type ScenarioContext } from "../lib/scenario.js";
import { summarizeLatency, type LatencySummary } from "../lib/stats.js";
import type { BenchSystem } from "../lib/system.js";
import { TasklaneSystem } from "../lib/tasklane.js";
import { now, sleep, waitUntil } from "../lib/time.js";

const B_RATE = 100;
const LOAD_BATCH = 1000;
/** Tasks the worker drains, untimed, before the first run, as a share of A's backlog (full size: ~10 s at full speed here). */
const WORKER_WARM_UP_SHARE = 0.3;
const QUEUE = "bench-push";

interface FairnessRun {
  /** From the system accepting B's task to its handler start: the queueing alone. */
  queued: LatencySummary;
  /** From B sending the submission to its handler start: the API call included. */
  submitToStart: LatencySummary;
  expected: number;
  /** A's tasks still unfinished when B's last task started: A was busy throughout when > 0. */
  backlogLeft: number;
}

export const fairnessScenario: Scenario = {
  id: 5,
  title: "Fairness: tenant B's queue wait behind tenant A's backlog",
  async run(ctx) {
    const figures = new FigureSet();
    const notes: string[] = [];
    const warmUpTasks = Math.round(ctx.sizes.fairnessBacklog * WORKER_WARM_UP_SHARE);
    const record = (system: string, run: FairnessRun, i: number) => {
      figures.add(system, "B queue wait p50", "ms", "lower", run.queued.p50);
      figures.add(system, "B queue wait p99", "ms", "lower", run.queued.p99);
      figures.add(system, "B queue wait max", "ms", "lower", run.queued.max);
      figures.add(system, "B submit→start p50", "ms", "lower", run.submitToStart.p50);
      figures.add(system, "B submit→start p99", "ms", "lower", run.submitToStart.p99);
      figures.add(system, "A backlog left", "tasks", "higher", run.backlogLeft);
      if (run.queued.count < run.expected) notes.push(`${system} ${runLabel(i, ctx.runs)}: only ${run.queued.count} of ${run.expected} of B's tasks started in time.`);
      if (run.backlogLeft === 0) notes.push(`${system} ${runLabel(i, ctx.runs)}: A's backlog ran out before B finished, so part of B's window had no contention.`);
    };
    // One platform and one worker process for every run. The worker first drains an untimed backlog, as
    // s1 warms every system: started cold for each run, its first ~10 s at full speed (V8 optimising
    // its hot paths) were all of B's window. Then A's queue is paused while its backlog is topped up
    // to its size, and resumed to start each run; paused again after it.
    await withPlatform({ worker: true, profile: ctx.profile }, async (platform) => {
      const receiver = await Probe.start("receiver-fairness", { role: "push-receiver" });
      try {
        const tenantA = await platform.createTenant("tenant-a");
        const a = await TasklaneSystem.push(platform, tenantA, { queue: QUEUE, label: "Tasklane A", receiver });
        const b = await TasklaneSystem.push(platform, await platform.createTenant("tenant-b"), { queue: QUEUE, label: "Tasklane B", receiver });
        log("s5 fairness", `warming the worker: ${fmt(warmUpTasks)} of A's tasks, untimed`);
        await warmUp(a, { count: warmUpTasks, consumers: true, timeoutMs: 120_000 });
        await tenantA.client.queues.pause(QUEUE);
        for (let i = 0; i < ctx.runs; i++) {
          const run = await measureFairness(ctx, i, "Tasklane PUSH", a, b, {
            start: async () => void (await tenantA.client.queues.resume(QUEUE)),
            stop: async () => void (await tenantA.client.queues.pause(QUEUE)),
          });
          record("Tasklane PUSH (per-tenant queues)", run, i);
        }
      } finally {
        await receiver.stop();
      }
    });
    for (let i = 0; i < ctx.runs; i++) {
      await withPeer("bullmq", async (shared) => {
        const run = await measureFairness(ctx, i, "BullMQ", shared, shared, { start: () => shared.startConsumers(), stop: async () => undefined });
        record("BullMQ (one shared queue)", run, i);
      });
    }
    log("s5 fairness", "done");
    return {
      id: 5,
      title: this.title,
      method:
        `Per run: tenant A's backlog is brought to ${fmt(ctx.sizes.fairnessBacklog)} queued tasks (batches of ${fmt(LOAD_BATCH)}) while no consumer takes them (Tasklane: A's queue paused; BullMQ: no worker yet); then they start ` +
        `and, once A's tasks flow, tenant B submits one task every ${1000 / B_RATE} ms for ${ctx.sizes.fairnessSeconds} s (submitTask, one per call). ` +
        "B's queue wait = handler start − the moment the system accepted the task (Tasklane: the task's created_at in Postgres; BullMQ: the add call, " +
        `which returns in about a millisecond); B's submit→start = handler start − the moment B sent the call (API latency included). Tasklane: one platform and one worker process (concurrency ${CONSUMER_CONCURRENCY}), ` +
        `warmed by draining ${fmt(warmUpTasks)} of A's tasks untimed before the first run and kept running (A's queue resumed to start each run, paused after it), ` +
        `two tenants with their own PUSH queue and equal weight. BullMQ: the same load on one shared queue and one Worker (concurrency ${CONSUMER_CONCURRENCY}). ` +
        "'A backlog left' = A's unfinished tasks when B's window closed (> 0: A was contending throughout).",
      figures: figures.summaries(),
      notes,
    };
  },
};

interface Consumers {
  start(): Promise<void> | void;
  stop(): Promise<void>;
}

async function measureFairness(ctx: ScenarioContext, i: number, label: string, a: BenchSystem, b: BenchSystem, consumers: Consumers): Promise<FairnessRun> {
  const scope = `s5 fairness · ${label} · ${runLabel(i, ctx.runs)}`;
  // Top A's backlog up to its size (all of it on the first run).
  const load = await submitAll(a, {
    total: Math.max(0, ctx.sizes.fairnessBacklog - (await a.unfinished())),
    batchSize: LOAD_BATCH,
    inFlight: 4,
    deadline: now() + 120_000,
    ticker: new Ticker(`${scope} · loading A`),
  });
  if (load.errors) throw new Error(`${label}: loading A's backlog failed: ${load.firstError ?? ""}`);
  const startedBefore = b.probe?.started ?? 0;
  await consumers.start();
  const probe = await waitUntil(`${label} consumers`, () => b.probe, 30_000);
  await waitUntil(`${label} to start A's tasks`, () => (probe.started > startedBefore ? true : undefined), 30_000, 10);
  await probe.collect();
  const tracked = new Set<string>();
  const ticker = new Ticker(`${scope} · B submitting`);
  const paced = await drivePaced(b, {
    rate: B_RATE,
    durationMs: ctx.sizes.fairnessSeconds * 1000,
    tickMs: 10,
    single: true,
    task: (_index, sentAt) => ({ ref: sentAt }),
    onAck: (ack: Acked) => ack.ids.forEach((id) => tracked.add(id)),
    ticker,
  });
  // A's backlog as B's window closes (on a shared queue, minus B's tasks still waiting in it).
  const unfinishedAtEnd = await a.unfinished();
  const isTracked = (s: { id: string }) => tracked.has(s.id);
  let bStarts: StartSample[] = (await probe.collect()).filter(isTracked);
  const backlogLeft = Math.max(0, unfinishedAtEnd - (a === b ? paced.acked - bStarts.length : 0));
  const deadline = now() + 60_000;
  while (bStarts.length < paced.acked && now() < deadline) {
    b.assertAlive();
    await sleep(50);
    bStarts = bStarts.concat((await probe.collect()).filter(isTracked));
  }
  await consumers.stop();
  const accepted = (await b.acceptedAt?.(bStarts.map((s) => s.id))) ?? new Map<string, number>();
  const queued = summarizeLatency(bStarts.map((s) => s.at - (accepted.get(s.id) ?? s.ref)));
  const submitToStart = summarizeLatency(bStarts.map((s) => s.at - s.ref));
  ticker.tick(
    `B: ${fmt(queued.count)}/${fmt(paced.acked)} started · queue wait p50 ${fmt(queued.p50, 1)} ms · p99 ${fmt(queued.p99, 1)} ms · max ${fmt(queued.max, 1)} ms · ` +
      `submit→start p99 ${fmt(submitToStart.p99, 1)} ms · A left ${fmt(backlogLeft)}`,
    true,
  );
  return { queued, submitToStart, expected: paced.acked, backlogLeft };
}
