/**
 * The shared ways of driving a system: submit a fixed amount as fast as
 * allowed, submit at a steady rate, wait for consumers. Every loop here
 * stops on its count or its deadline, whichever comes first.
 */
import { fmt, Ticker } from "./progress.js";
import type { Probe, StartSample } from "./probe.js";
import type { BenchSystem, TaskRequest } from "./system.js";
import { now, sleep } from "./time.js";

export interface Acked {
  ids: string[];
  sentAt: number;
  ackAt: number;
}

export interface SubmitPlan {
  total: number;
  /** 1: submitOne per task; more: submitMany with this many tasks per call. */
  batchSize: number;
  /** Calls in flight at once. */
  inFlight: number;
  deadline: number;
  task?: (index: number) => TaskRequest;
  onAck?: (acked: Acked) => void;
  ticker?: Ticker;
}

export interface SubmitOutcome {
  acked: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
}

/** Submits `total` tasks with `inFlight` calls at a time; stops early at the deadline. */
export async function submitAll(system: BenchSystem, plan: SubmitPlan): Promise<SubmitOutcome> {
  const started = now();
  let next = 0;
  let acked = 0;
  let errors = 0;
  let firstError: string | undefined;
  const make = plan.task ?? (() => ({}));
  const lane = async () => {
    while (next < plan.total && now() < plan.deadline && errors < 50) {
      const from = next;
      const count = Math.min(plan.batchSize, plan.total - from);
      next += count;
      const tasks = Array.from({ length: count }, (_, i) => make(from + i));
      const sentAt = now();
      try {
        const ids = plan.batchSize === 1 ? [await system.submitOne(tasks[0] as TaskRequest)] : await system.submitMany(tasks);
        acked += ids.length;
        plan.onAck?.({ ids, sentAt, ackAt: now() });
      } catch (error: unknown) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
      plan.ticker?.tick(`${fmt(acked)}/${fmt(plan.total)} submitted · ${fmt((acked * 1000) / Math.max(1, now() - started))}/s`);
    }
  };
  await Promise.all(Array.from({ length: plan.inFlight }, lane));
  return { acked, errors, elapsedMs: now() - started, ...(firstError ? { firstError } : {}) };
}

export interface ThroughputOutcome {
  /** Finished tasks per second, from the first submission to the last finish. */
  rate: number;
  finished: number;
  elapsedMs: number;
  timedOut: boolean;
  submitErrors: number;
  firstError?: string;
}

/**
 * Sustained end to end: submits `total` tasks in batches while the consumers
 * run, and waits until the system records every one as finished.
 */
export async function driveThroughput(system: BenchSystem, opts: { total: number; batchSize: number; inFlight: number; timeoutMs: number; ticker: Ticker }): Promise<ThroughputOutcome> {
  const t0 = now();
  const deadline = t0 + opts.timeoutMs;
  let submitted = 0;
  let submitting = true;
  const submission = submitAll(system, {
    total: opts.total,
    batchSize: opts.batchSize,
    inFlight: opts.inFlight,
    deadline,
    onAck: (a) => (submitted += a.ids.length),
  }).finally(() => (submitting = false));
  let unfinished = Number.POSITIVE_INFINITY;
  let detectedAt = 0;
  while (now() < deadline) {
    system.assertAlive();
    unfinished = await system.unfinished();
    // Tasks committed but not yet acknowledged count as unfinished, not yet as submitted.
    const finished = Math.max(0, submitted - unfinished);
    opts.ticker.tick(`${fmt(finished)}/${fmt(opts.total)} finished · ${fmt((finished * 1000) / Math.max(1, now() - t0))}/s`);
    if (!submitting && unfinished === 0) {
      detectedAt = now();
      break;
    }
    // Poll fast near the end so the finish time is sharp; slowly before, to stay out of the way.
    await sleep(submitting || unfinished > opts.total * 0.05 ? 200 : 20);
  }
  const sub = await submission;
  const timedOut = detectedAt === 0;
  const last = timedOut ? undefined : await system.lastFinishedAt();
  const end = last !== undefined && last >= t0 && last <= detectedAt ? last : detectedAt || now();
  const finished = timedOut ? Math.max(0, sub.acked - (await system.unfinished())) : sub.acked;
  const elapsedMs = end - t0;
  return { rate: (finished * 1000) / elapsedMs, finished, elapsedMs, timedOut, submitErrors: sub.errors, ...(sub.firstError ? { firstError: sub.firstError } : {}) };
}

export interface PacedPlan {
  /** Tasks per second. */
  rate: number;
  durationMs: number;
  /** One call every tick carries the tasks due by then (rate × tick). */
  tickMs: number;
  /** The task with sequence number i, sent at `sentAt`. */
  task: (index: number, sentAt: number) => TaskRequest;
  /** submitMany (batch) or submitOne per task. */
  single?: boolean;
  onAck?: (acked: Acked) => void;
  ticker: Ticker;
}

export interface PacedOutcome {
  sent: number;
  acked: number;
  errors: number;
  firstError?: string;
  /** The largest shortfall behind the schedule, in tasks (the submitter could not keep up). */
  maxBacklog: number;
}

/** Submits at a steady rate: every tick, whatever the schedule says is due by now. */
export async function drivePaced(system: BenchSystem, plan: PacedPlan): Promise<PacedOutcome> {
  const total = Math.round((plan.rate * plan.durationMs) / 1000);
  const t0 = now();
  const hardStop = t0 + plan.durationMs * 2 + 5_000;
  let sent = 0;
  let acked = 0;
  let errors = 0;
  let maxBacklog = 0;
  let firstError: string | undefined;
  const inFlight = new Set<Promise<void>>();
  for (let tick = 1; sent < total && now() < hardStop; tick++) {
    const due = Math.min(total, Math.floor((plan.rate * (now() - t0)) / 1000));
    maxBacklog = Math.max(maxBacklog, due - sent);
    if (due > sent && inFlight.size < 64) {
      const from = sent;
      const sentAt = now();
      const tasks = Array.from({ length: due - from }, (_, i) => plan.task(from + i, sentAt));
      sent = due;
      const call = (async () => {
        try {
          const ids = plan.single ? await Promise.all(tasks.map((t) => system.submitOne(t))) : await system.submitMany(tasks);
          acked += ids.length;
          plan.onAck?.({ ids, sentAt, ackAt: now() });
        } catch (error: unknown) {
          errors++;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      })();
      inFlight.add(call);
      void call.finally(() => inFlight.delete(call));
    }
    plan.ticker.tick(`${fmt(acked)}/${fmt(total)} submitted at ${fmt(plan.rate)}/s`);
    await sleep(t0 + tick * plan.tickMs - now());
  }
  await Promise.all(inFlight);
  return { sent, acked, errors, maxBacklog, ...(firstError ? { firstError } : {}) };
}

/** Waits until the probe has seen `count` more handler starts than `baseline` (or the time is up), then takes its samples. */
export async function collectStarts(probe: Probe, baseline: number, count: number, timeoutMs: number, ticker?: Ticker): Promise<{ samples: StartSample[]; complete: boolean }> {
  const deadline = now() + timeoutMs;
  while (probe.started - baseline < count && now() < deadline) {
    probe.assertAlive();
    ticker?.tick(`${fmt(probe.started - baseline)}/${fmt(count)} started`);
    await sleep(20);
  }
  const complete = probe.started - baseline >= count;
  return { samples: await probe.collect(), complete };
}

/**
 * Runs a few untracked tasks through the system (JIT, connections, caches)
 * and, when its consumers run, waits until they are finished.
 */
export async function warmUp(system: BenchSystem, opts: { count?: number; consumers: boolean; timeoutMs?: number }): Promise<void> {
  const count = opts.count ?? 300;
  const deadline = now() + (opts.timeoutMs ?? 30_000);
  await submitAll(system, { total: count, batchSize: 100, inFlight: 2, deadline });
  await submitAll(system, { total: 32, batchSize: 1, inFlight: 8, deadline });
  if (!opts.consumers) return;
  while (now() < deadline && (await system.unfinished()) > 0) await sleep(50);
  await system.probe?.collect();
}
