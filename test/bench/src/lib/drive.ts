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
  /** The tasks as submitted, in the order of `ids`. */
  tasks: TaskRequest[];
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
        plan.onAck?.({ ids, tasks, sentAt, ackAt: now() });
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
  /** Finished tasks per second over the run. */
  rate: number;
  finished: number;
  elapsedMs: number;
  /** The window closed before all `total` tasks were finished (the rate over the window stands). */
  windowClosed: boolean;
  /** Unfinished tasks when the run started (the previous run's backlog, which this run works on too). */
  backlogAtStart: number;
  submitErrors: number;
  firstError?: string;
}

export interface ThroughputPlan {
  /** At most this many tasks are submitted per run… */
  total: number;
  /** …and the run lasts at most this long. */
  windowMs: number;
  batchSize: number;
  inFlight: number;
  /** Submitting pauses while this many tasks are unfinished, so the queue stays a steady size. */
  maxBacklog: number;
  ticker: Ticker;
}

/**
 * Sustained end to end: keeps the system fed with batches (never more than
 * `maxBacklog` unfinished) while its consumers run, until `total` tasks are
 * finished or the window closes. finished = backlog at start + submitted −
 * unfinished at the end, so a backlog carried from the run before counts
 * where it is worked off.
 */
export async function driveThroughput(system: BenchSystem, plan: ThroughputPlan): Promise<ThroughputOutcome> {
  const backlogAtStart = await system.unfinished();
  const t0 = now();
  const deadline = t0 + plan.windowMs;
  /** The system's count of unfinished tasks (polled; bumped by each acknowledged batch in between). */
  let unfinished = backlogAtStart;
  let requested = 0;
  let submitted = 0;
  let errors = 0;
  let firstError: string | undefined;
  const lane = async () => {
    while (requested < plan.total && now() < deadline && errors < 20) {
      if (unfinished + (requested - submitted) >= plan.maxBacklog) {
        await sleep(5);
        continue;
      }
      const count = Math.min(plan.batchSize, plan.total - requested);
      requested += count;
      try {
        const ids = await system.submitMany(Array.from({ length: count }, () => ({})));
        submitted += ids.length;
        unfinished += ids.length;
      } catch (error: unknown) {
        errors++;
        firstError ??= error instanceof Error ? error.message : String(error);
      }
    }
  };
  const submission = Promise.all(Array.from({ length: plan.inFlight }, lane));
  let allDoneAt = 0;
  while (now() < deadline) {
    system.assertAlive();
    const acked = submitted;
    unfinished = await system.unfinished();
    const finished = Math.max(0, backlogAtStart + acked - unfinished);
    plan.ticker.tick(`${fmt(finished)} finished · ${fmt((finished * 1000) / Math.max(1, now() - t0))}/s · ${fmt(unfinished)} unfinished`);
    if (requested === plan.total && submitted === requested && unfinished === 0) {
      allDoneAt = now();
      break;
    }
    // Poll fast near the end so the finish time is sharp.
    await sleep(requested === plan.total && unfinished < plan.maxBacklog / 5 ? 20 : 100);
  }
  await submission;
  let end = now();
  let finished: number;
  if (allDoneAt) {
    const last = await system.lastFinishedAt();
    end = last !== undefined && last >= t0 && last <= allDoneAt ? last : allDoneAt;
    finished = backlogAtStart + submitted;
  } else {
    finished = Math.max(0, backlogAtStart + submitted - (await system.unfinished()));
  }
  const elapsedMs = end - t0;
  return { rate: (finished * 1000) / elapsedMs, finished, elapsedMs, windowClosed: !allDoneAt, backlogAtStart, submitErrors: errors, ...(firstError ? { firstError } : {}) };
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
          plan.onAck?.({ ids, tasks, sentAt, ackAt: now() });
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

export interface CollectedStarts {
  /** The first start of each tracked task. */
  samples: StartSample[];
  complete: boolean;
  /** Starts of a tracked task after its first: the same task's handler ran again. */
  duplicates: number;
}

/**
 * Collects handler starts until every tracked task has started once or the
 * time runs out. Counted by task id, not by starts: a count of raw starts
 * (stragglers of an earlier run, a task run twice) could end the wait while
 * tracked tasks are still due, and those would then look as if they had
 * started before they were due.
 */
export async function collectStarts(probe: Probe, tracked: ReadonlySet<string>, timeoutMs: number, ticker?: Ticker): Promise<CollectedStarts> {
  const deadline = now() + timeoutMs;
  const samples: StartSample[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  for (;;) {
    for (const sample of await probe.collect()) {
      if (!tracked.has(sample.id)) continue;
      if (seen.has(sample.id)) duplicates++;
      else {
        seen.add(sample.id);
        samples.push(sample);
      }
    }
    if (seen.size >= tracked.size || now() >= deadline) break;
    probe.assertAlive();
    ticker?.tick(`${fmt(seen.size)}/${fmt(tracked.size)} started`);
    await sleep(20);
  }
  return { samples, complete: seen.size >= tracked.size, duplicates };
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
