/**
 * 1. Sustained end-to-end throughput: tasks submitted in batches of 500
 * (4 calls in flight) while the consumers run, until every task is finished
 * as the system durably records it (Tasklane: SUCCEEDED in Postgres). Peak
 * RSS of every process is sampled meanwhile (scenario 7).
 */
import { CONSUMER_CONCURRENCY } from "../lib/concurrency.js";
import { withCpuPerTask } from "../lib/cpu.js";
import { driveThroughput, warmUp } from "../lib/drive.js";
import type { PeerKind } from "../lib/peers.js";
import type { TasklanePlatform, Tenant } from "../lib/platform.js";
import { fmt, log, Ticker } from "../lib/progress.js";
import { FigureSet, memoryRows, type MemoryRow } from "../lib/results.js";
import { RssSampler } from "../lib/rss.js";
import { inRounds, peerOpener, tasklaneOpener } from "../lib/rounds.js";
import { measures, runLabel, type Scenario } from "../lib/scenario.js";
import type { BenchSystem } from "../lib/system.js";
import { TasklaneSystem } from "../lib/tasklane.js";

const BATCH = 500;
const IN_FLIGHT = 4;
const PEERS: PeerKind[] = ["bullmq", "graphile", "graphile-batched", "pg-boss"];
/** PUSH (with the worker fleet) and PULL, in that order. */
const MODES = [
  { name: "push", open: (platform: TasklanePlatform, tenant: Tenant) => TasklaneSystem.push(platform, tenant) },
  { name: "pull", open: async (platform: TasklanePlatform, tenant: Tenant) => TasklaneSystem.pull(platform, tenant) },
] as const;
const CPU_TABLE = "CPU time per 1,000 tasks (ms), by process";
/** Enough queued work to keep every consumer busy, small enough to drain between systems. */
const MAX_BACKLOG = 5_000;

export const throughputScenario: Scenario = {
  id: 1,
  title: "Sustained end-to-end throughput",
  async run(ctx) {
    const figures = new FigureSet();
    const notes: string[] = [];
    /** Each process's peak over the rounds, by system and process, in the order first seen. */
    const peaks = new Map<string, MemoryRow>();
    const failures = new Map<string, number>();
    const windowClosed = new Set<string>();
    /** One round of one system, opened afresh: warmed up, one untimed run, then one measured run. */
    const measureOnce = async (system: BenchSystem, round: number) => {
      const sampler = new RssSampler(200);
      await system.startConsumers();
      for (const p of system.processes()) sampler.track(p.pid, p.label);
      await warmUp(system, { consumers: true, count: ctx.quick ? 100 : 300 });
      for (const p of system.processes()) sampler.track(p.pid, p.label);
      const plan = { total: ctx.sizes.throughputTasks, windowMs: ctx.sizes.throughputWindowSeconds * 1000, batchSize: BATCH, inFlight: IN_FLIGHT, maxBacklog: MAX_BACKLOG };
      const label = runLabel(round, ctx.runs);
      // An untimed run of the measured size (or of throughputWarmUpSeconds), for every system alike:
      // with only the short warm-up, each system's first measured run was its cold one (PULL 3,798
      // then 4,678 / 4,903 / 4,701 / 4,958 tasks/s; BullMQ 11,799 then ~15,100), so min-max showed
      // JIT warm-up, not spread.
      const warmUpRun = new Ticker(`s1 throughput · ${system.label} · ${label} · untimed warm-up run`);
      const warm = await driveThroughput(system, { ...plan, windowMs: ctx.sizes.throughputWarmUpSeconds * 1000, ticker: warmUpRun });
      warmUpRun.tick(`${fmt(warm.finished)} finished · ${fmt(warm.rate)}/s (not counted)`, true);
      const ticker = new Ticker(`s1 throughput · ${system.label} · ${label}`);
      const out = await withCpuPerTask(
        system,
        (process, ms) => figures.add(system.label, process, "ms", "lower", ms, CPU_TABLE),
        () => driveThroughput(system, { ...plan, ticker }),
      );
      ticker.tick(`${fmt(out.finished)} finished in ${fmt(out.elapsedMs)} ms · ${fmt(out.rate)}/s${out.windowClosed ? " (window closed first)" : ""}`, true);
      figures.add(system.label, "tasks/s", "tasks/s", "higher", out.rate);
      if (out.submitErrors) notes.push(`${system.label}, ${label}: ${out.submitErrors} submission errors (${out.firstError ?? ""}).`);
      if (out.windowClosed) windowClosed.add(system.label);
      const failed = await system.failed();
      if (failed) failures.set(system.label, (failures.get(system.label) ?? 0) + failed);
      for (const row of memoryRows(system.label, await sampler.stop())) {
        const key = `${row.system}\u0000${row.process}`;
        const seen = peaks.get(key);
        if (!seen || row.peakMiB > seen.peakMiB) peaks.set(key, row);
      }
    };

    // PUSH and PULL each get a fresh platform in every round, so memory and table sizes are their own.
    const openers = [
      ...MODES.filter((mode) => measures(ctx, mode.name)).map((mode) =>
        tasklaneOpener({ worker: mode.name === "push", profile: ctx.profile }, (platform, tenant) => mode.open(platform, tenant)),
      ),
      ...PEERS.filter((kind) => measures(ctx, kind)).map(peerOpener),
    ];
    await inRounds(ctx.runs, openers, measureOnce);
    for (const [system, failed] of failures) notes.push(`${system}: ${failed} tasks failed.`);
    const memory = [...peaks.values()];
    if (windowClosed.size) {
      notes.push(`${[...windowClosed].join(", ")}: runs ended when the ${ctx.sizes.throughputWindowSeconds} s window closed, before ${fmt(ctx.sizes.throughputTasks)} tasks were finished; the rate is over the window.`);
    }
    log("s1 throughput", "done");
    return {
      id: 1,
      title: this.title,
      method:
        `In ${ctx.runs} rounds, each opening every system afresh in turn (Tasklane PUSH, PULL, then the peers), so that each takes a share of the machine's phases; ` +
        `per round and system, after a short warm-up and one untimed run of the measured size (at most ${ctx.sizes.throughputWarmUpSeconds} s): no-op tasks submitted in batches of ${BATCH} (${IN_FLIGHT} calls in flight, pausing while ${fmt(MAX_BACKLOG)} are unfinished) while the consumers run, ` +
        `until ${fmt(ctx.sizes.throughputTasks)} are finished or ${ctx.sizes.throughputWindowSeconds} s have passed; rate = finished ÷ elapsed ` +
        "(to the last finish when all are done; a backlog left by the previous run counts where it is worked off). Tasklane: submitTasks through the GraphQL API (SDK `submitManyIds`: the answer carries each task's id), finished = SUCCEEDED in Postgres; " +
        `PUSH = worker fleet POSTing to a local endpoint (one worker process, concurrency ${CONSUMER_CONCURRENCY}), PULL = one SDK Worker process (concurrency ${CONSUMER_CONCURRENCY}: three 100-task lease calls can overlap; leaseTasks/completeTasks). ` +
        "Peers: their own batch API (BullMQ addBulk, graphile-worker addJobs, pg-boss insert) and a worker in its own process, finished as each records it. " +
        "CPU time per task (from /proc/<pid>/stat over each run: every process of the system, the Postgres backends serving it, and the Redis server for the systems " +
        "that keep their queues there, Tasklane and BullMQ) hardly depends on other load on the machine: it is the figure to compare costs with.",
      figures: figures.summaries(),
      ratios: true,
      notes,
      memory,
    };
  },
};
