/**
 * 5. Fairness: tenant A has a backlog of 100,000 queued tasks when the
 * consumers start; tenant B then submits one task every 10 ms. B's queue
 * wait = handler start − the moment B sent the submission (API time
 * included, so a slow acknowledgement cannot hide a wait). Contrast: raw BullMQ
 * with both tenants on one shared queue (what a single-tenant queue gives you).
 */
import { drivePaced, submitAll, type Acked } from "../lib/drive.js";
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

interface FairnessRun {
  wait: LatencySummary;
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
    const record = (system: string, run: FairnessRun, i: number) => {
      figures.add(system, "B wait p50", "ms", "lower", run.wait.p50);
      figures.add(system, "B wait p99", "ms", "lower", run.wait.p99);
      figures.add(system, "B wait max", "ms", "lower", run.wait.max);
      figures.add(system, "A backlog left", "tasks", "higher", run.backlogLeft);
      if (run.wait.count < run.expected) notes.push(`${system} ${runLabel(i, ctx.runs)}: only ${run.wait.count} of ${run.expected} of B's tasks started in time.`);
      if (run.backlogLeft === 0) notes.push(`${system} ${runLabel(i, ctx.runs)}: A's backlog ran out before B finished, so part of B's window had no contention.`);
    };
    for (let i = 0; i < ctx.runs; i++) {
      // A fresh platform per run: A's backlog is exactly the size asked for, and nothing is left from the run before.
      await withPlatform({ worker: false, profile: ctx.profile }, async (platform) => {
        const receiver = await Probe.start("receiver-fairness", { role: "push-receiver" });
        try {
          const a = await TasklaneSystem.push(platform, await platform.createTenant("tenant-a"), { label: "Tasklane A", receiver });
          const b = await TasklaneSystem.push(platform, await platform.createTenant("tenant-b"), { label: "Tasklane B", receiver });
          const run = await measureFairness(ctx, i, "Tasklane PUSH", a, b, () => platform.startWorker());
          record("Tasklane PUSH (per-tenant queues)", run, i);
        } finally {
          await receiver.stop();
        }
      });
      await withPeer("bullmq", async (shared) => {
        const run = await measureFairness(ctx, i, "BullMQ", shared, shared, () => shared.startConsumers());
        record("BullMQ (one shared queue)", run, i);
      });
    }
    log("s5 fairness", "done");
    return {
      id: 5,
      title: this.title,
      method:
        `Per run: tenant A submits ${fmt(ctx.sizes.fairnessBacklog)} tasks (batches of ${fmt(LOAD_BATCH)}) with no consumer running; then the consumers start ` +
        `and, once A's tasks flow, tenant B submits one task every ${1000 / B_RATE} ms for ${ctx.sizes.fairnessSeconds} s (submitTask, one per call). ` +
        "B's wait = handler start − the moment B sent the submission (so it includes the API call). Tasklane: a fresh platform per run, one worker process (concurrency 100), " +
        "two tenants with their own PUSH queue and equal weight. BullMQ: the same load on one shared queue and one Worker (concurrency 100). " +
        "'A backlog left' = A's unfinished tasks when B's window closed (> 0: A was contending throughout).",
      figures: figures.summaries(),
      notes,
    };
  },
};

async function measureFairness(ctx: ScenarioContext, i: number, label: string, a: BenchSystem, b: BenchSystem, startConsumers: () => Promise<void> | void): Promise<FairnessRun> {
  const scope = `s5 fairness · ${label} · ${runLabel(i, ctx.runs)}`;
  const load = await submitAll(a, {
    total: ctx.sizes.fairnessBacklog,
    batchSize: LOAD_BATCH,
    inFlight: 4,
    deadline: now() + 120_000,
    ticker: new Ticker(`${scope} · loading A`),
  });
  if (load.errors) throw new Error(`${label}: loading A's backlog failed: ${load.firstError ?? ""}`);
  await startConsumers();
  const probe = await waitUntil(`${label} consumers`, () => b.probe, 30_000);
  await waitUntil(`${label} to start A's tasks`, () => (probe.started > 0 ? true : undefined), 30_000, 10);
  await probe.collect();
  const baseline = probe.started;
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
  const wait = summarizeLatency(bStarts.map((s) => s.at - s.ref));
  ticker.tick(`B: ${fmt(wait.count)}/${fmt(paced.acked)} started · wait p50 ${fmt(wait.p50, 1)} ms · p99 ${fmt(wait.p99, 1)} ms · max ${fmt(wait.max, 1)} ms · A left ${fmt(backlogLeft)}`, true);
  return { wait, expected: paced.acked, backlogLeft };
}
