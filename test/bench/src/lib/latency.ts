import { cpuMeterFor } from "./cpu.js";
import { collectStarts, drivePaced, warmUp, type Acked } from "./drive.js";
import { machineLoadBetween, readCpuTimes, type MachineLoad } from "./machine-load.js";
import { withPeer, type PeerKind } from "./peers.js";
import { withPlatform } from "./platform.js";
import { fmt, Ticker } from "./progress.js";
import type { FigureSet } from "./results.js";
import { measures, runLabel, type ScenarioContext } from "./scenario.js";
import { summarizeLatency, type LatencySummary } from "./stats.js";
import { sleep } from "./time.js";
import type { BenchSystem, TaskRequest } from "./system.js";
import { TasklaneSystem } from "./tasklane.js";

export interface LatencyPlan {
  scope: string;
  rate: number;
  durationMs: number;
  runs: number;
  /** Tasks of the warm-up before the first run. */
  warmUp: number;
  /** Then this long at the rate, unrecorded (Sizes.latencyWarmUpSeconds). */
  rateWarmUpMs: number;
  /** The task for sequence number i sent at `sentAt` (its ref decides what is measured). */
  task: (index: number, sentAt: number, t0: number) => TaskRequest;
  /** Milliseconds to allow after the last submission for the last start. */
  drainMs: number;
  /** Also measure from the acknowledgement (needs the ids), not only from `ref`. */
  fromAck: boolean;
}

export interface LatencyRun {
  /** start − ref per tracked task. */
  fromRef: LatencySummary;
  /** start − acknowledgement per tracked task (when fromAck). */
  fromAck?: LatencySummary;
  expected: number;
  started: number;
  /** Handler starts of a tracked task after its first (the task ran again). */
  duplicates: number;
  /**
   * CPU while the run submitted: µs per submitted task by process (the
   * system's, its Postgres backends, the harness) and in all, and how busy
   * the whole machine was. At a steady rate the tasks finishing in the window
   * balance those left running at its end.
   */
  cpu?: { usPerTask: Map<string, number>; totalUsPerTask: number; machine: MachineLoad | undefined };
}

/**
 * Steady submission at `rate` in 10 ms ticks (one batch call per tick) while
 * the consumers run; each tracked task's handler start is compared with its
 * reference time and, optionally, with the moment its submission was acknowledged.
 */
export async function measureLatency(system: BenchSystem, plan: LatencyPlan): Promise<LatencyRun[]> {
  await system.startConsumers();
  await warmUp(system, { consumers: true, count: plan.warmUp });
  // The issue measures at a steady rate. In its first seconds at the rate every system is still
  // opening connections and warming its hot paths (Tasklane's p99 in the first second was 3-8x the
  // steady one's, and still 1.5x in the next ten), so an unrecorded stretch at the rate comes first.
  const warmT0 = Date.now();
  await drivePaced(system, {
    rate: plan.rate,
    durationMs: plan.rateWarmUpMs,
    tickMs: 10,
    task: (index, sentAt) => plan.task(index, sentAt, warmT0),
    ticker: new Ticker(`${plan.scope} · ${system.label} · ${fmt(plan.rateWarmUpMs / 1000)} s at the rate, unrecorded`),
  });
  const probe = system.probe;
  if (!probe) throw new Error(`${system.label} has no probe`);
  const out: LatencyRun[] = [];
  for (let i = 0; i < plan.runs; i++) {
    const ticker = new Ticker(`${plan.scope} · ${system.label} · ${runLabel(i, plan.runs)}`);
    // A run that overloaded the system leaves a backlog; measuring the next run on top of it
    // would charge that backlog to the next rate (seen: a 200/s run right after a 1,000/s one).
    await waitUntilIdle(system, IDLE_WAIT_MS, ticker);
    const submitted = new Map<string, { ref: number; ackAt: number }>();
    // Starts recorded before this run (stragglers of the one before) are not this run's.
    await probe.collect();
    const meter = cpuMeterFor(system);
    await meter.start();
    const ticksBefore = await readCpuTimes();
    const t0 = Date.now();
    const paced = await drivePaced(system, {
      rate: plan.rate,
      durationMs: plan.durationMs,
      tickMs: 10,
      task: (index, sentAt) => plan.task(index, sentAt, t0),
      onAck: (a: Acked) => a.ids.forEach((id, k) => submitted.set(id, { ref: a.tasks[k]?.ref ?? a.sentAt, ackAt: a.ackAt })),
      ticker,
    });
    const ticksAfter = await readCpuTimes();
    const cpu = perTask(await meter.stop(), paced.acked, ticksBefore && ticksAfter ? machineLoadBetween(ticksBefore, ticksAfter) : undefined);
    const collected = await collectStarts(probe, new Set(submitted.keys()), plan.drainMs, ticker);
    const samples = collected.samples;
    const complete = collected.complete;
    // Tasks that had not started when the drain time ran out count with the time waited so far: a lower bound, not a gap.
    const collectedAt = Date.now();
    const started = new Set(samples.map((s) => s.id));
    const waiting = [...submitted].filter(([id]) => !started.has(id)).map(([, t]) => t);
    const fromRef = summarizeLatency([...samples.map((s) => s.at - s.ref), ...waiting.map((t) => collectedAt - t.ref)]);
    const fromAck = plan.fromAck
      ? summarizeLatency([
          ...samples.flatMap((s) => {
            const t = submitted.get(s.id);
            return t ? [s.at - t.ackAt] : [];
          }),
          ...waiting.map((t) => collectedAt - t.ackAt),
        ])
      : undefined;
    const shown = fromAck ?? fromRef;
    ticker.tick(
      `${fmt(samples.length)}/${fmt(paced.acked)} started${complete ? "" : " (INCOMPLETE)"} · p50 ${fmt(shown.p50, 1)} ms · p99 ${fmt(shown.p99, 1)} ms · max ${fmt(shown.max, 1)} ms` +
        (cpu ? ` · ${fmt(cpu.totalUsPerTask)} µs CPU per task` : "") +
        (cpu?.machine ? ` · machine ${fmt(cpu.machine.busy * 100)}% busy` : "") +
        (paced.errors ? ` · ${paced.errors} submit errors` : "") +
        (paced.maxBacklog > plan.rate / 10 ? ` · submitter fell ${paced.maxBacklog} tasks behind` : ""),
      true,
    );
    out.push({ fromRef, ...(fromAck ? { fromAck } : {}), expected: paced.acked, started: samples.length, duplicates: collected.duplicates, ...(cpu ? { cpu } : {}) });
  }
  return out;
}

function perTask(usedMs: Map<string, number>, tasks: number, machine: MachineLoad | undefined): LatencyRun["cpu"] {
  if (tasks === 0) return undefined;
  const usPerTask = new Map([...usedMs].map(([label, ms]) => [label, (ms * 1000) / tasks]));
  const totalUsPerTask = [...usPerTask.values()].reduce((a, b) => a + b, 0);
  return { usPerTask, totalUsPerTask, machine };
}

/** The named table of CPU per task at the rate, by process. */
export const CPU_AT_RATE_TABLE = "CPU time per task while submitting at the rate (µs), by process";

/**
 * Adds a run's CPU figures: the machine's busy share to the main table, µs
 * per task by process (and in all) to CPU_AT_RATE_TABLE; notes the
 * hypervisor's share when it took a noticeable one.
 */
export function addCpuFigures(figures: FigureSet, notes: string[], system: string, runs: LatencyRun[]): void {
  runs.forEach((r, i) => {
    if (!r.cpu) return;
    if (r.cpu.machine) figures.add(system, "machine busy", "%", "lower", r.cpu.machine.busy * 100);
    for (const [label, us] of r.cpu.usPerTask) figures.add(system, label, "µs", "lower", us, CPU_AT_RATE_TABLE);
    figures.add(system, "total", "µs", "lower", r.cpu.totalUsPerTask, CPU_AT_RATE_TABLE);
    const steal = r.cpu.machine?.steal ?? 0;
    if (steal >= 0.01) notes.push(`${system} ${runLabel(i, runs.length)}: the hypervisor took ${fmt(steal * 100, 1)}% of the cores' time (steal) while it submitted.`);
  });
}

/** The method's sentence for those figures. */
export const CPU_AT_RATE_METHOD =
  "CPU while each run submits (from /proc: the system's processes, its Postgres backends, the Redis server where it keeps its queues, and the harness) " +
  "÷ tasks submitted, and how busy the whole machine was (/proc/stat, every process); a latency tail at a steady rate is mostly time spent waiting for a core.";

/** Adds p50/p99/max (and min) of one latency summary per run to the figures. */
export function addLatencyFigures(figures: FigureSet, system: string, prefix: string, summary: LatencySummary, withMin = false): void {
  figures.add(system, `${prefix}p50`, "ms", "lower", summary.p50);
  figures.add(system, `${prefix}p99`, "ms", "lower", summary.p99);
  figures.add(system, `${prefix}max`, "ms", "lower", summary.max);
  if (withMin) figures.add(system, `${prefix}min`, "ms", "lower", summary.min);
}

/** Notes for runs where not every task started, or some started early. */
export function latencyNotes(system: string, runs: LatencyRun[]): string[] {
  const notes: string[] = [];
  runs.forEach((r, i) => {
    if (r.started < r.expected) {
      notes.push(
        `${system} ${runLabel(i, runs.length)}: only ${fmt(r.started)} of ${fmt(r.expected)} tasks had started by the end of the drain time (it could not keep up with the rate); ` +
          "the others count with the time they had waited, so its percentiles are lower bounds.",
      );
    }
    if (r.duplicates > 0) notes.push(`${system} ${runLabel(i, runs.length)}: ${fmt(r.duplicates)} handler starts were repeats of a task that had already started.`);
    if (r.fromRef.negative > 0) notes.push(`${system} ${runLabel(i, runs.length)}: ${r.fromRef.negative} tasks started before their reference time (min ${fmt(r.fromRef.min, 1)} ms).`);
  });
  return notes;
}

/** At most this long for the previous run's tasks to finish before the next run starts. */
const IDLE_WAIT_MS = 60_000;
/** Before a run at LOW_RATE, which follows a run at 1,000 tasks/s on the same (already warm) processes. */
const LOW_RATE_WARM_UP_MS = 1_000;

/** The unrecorded stretch at `rate` before a system's first run (see Sizes.latencyWarmUpSeconds). */
export function rateWarmUpMs(ctx: ScenarioContext, rate: number): number {
  return rate === LOW_RATE ? LOW_RATE_WARM_UP_MS : ctx.sizes.latencyWarmUpSeconds * 1000;
}

/** What the scenario's method says about that stretch. */
export function rateWarmUpText(ctx: ScenarioContext): string {
  const seconds = ctx.sizes.latencyWarmUpSeconds;
  return `each system first runs ${seconds === 1 ? "one unrecorded second" : `${fmt(seconds)} unrecorded seconds`} at the rate, while V8 optimises its hot paths, ` +
    `and one before the ${LOW_RATE}/s runs, which follow on the same processes`;
}

async function waitUntilIdle(system: BenchSystem, maxMs: number, ticker: Ticker): Promise<void> {
  const deadline = Date.now() + maxMs;
  for (;;) {
    const left = await system.unfinished();
    if (left === 0 || Date.now() >= deadline) return;
    ticker.tick(`waiting for ${fmt(left)} unfinished tasks of the run before`);
    await sleep(200);
  }
}

/** Below Tasklane's saturation point: what the mechanism itself adds, apart from queueing. */
export const LOW_RATE = 200;

/**
 * Runs `measure` for every system of a latency scenario: Tasklane PUSH and PULL,
 * each also at LOW_RATE (full runs only), on one platform, then each peer on its own.
 */
export async function measureEverySystem(
  ctx: ScenarioContext,
  measure: (system: BenchSystem, rate?: number, label?: string) => Promise<void>,
): Promise<void> {
  if (measures(ctx, "push") || measures(ctx, "pull")) {
    await withPlatform({ worker: true, profile: ctx.profile }, async (platform, tenant) => {
      const systems: TasklaneSystem[] = [];
      try {
        if (measures(ctx, "push")) systems.push(await TasklaneSystem.push(platform, tenant));
        if (measures(ctx, "pull")) systems.push(TasklaneSystem.pull(platform, tenant));
        for (const system of systems) {
          await measure(system);
          if (!ctx.quick) await measure(system, LOW_RATE, `${system.label} at ${LOW_RATE}/s`);
        }
      } finally {
        for (const system of systems) await system.close();
      }
    });
  }
  // --quick keeps raw BullMQ only: graphile-worker's and pg-boss's latencies are bound by their polling intervals anyway.
  const peers: PeerKind[] = ctx.quick ? ["bullmq"] : ["bullmq", "graphile", "pg-boss"];
  for (const kind of peers) if (measures(ctx, kind)) await withPeer(kind, measure);
}
