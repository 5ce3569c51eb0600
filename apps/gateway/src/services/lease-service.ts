import { BadUserInputError, MAX_JSON_DEPTH, MAX_RESULT_BYTES, NotFoundError, StaleLeaseError, gatherLeadMs, jsonLimitViolation } from "@tasklane/core";
import {
  completeLeases,
  failLease,
  heartbeatLease,
  leaseFromPullQueue,
  msUntilNextDue,
  returnUndeliveredLeases,
  type BodyBudget,
  type Database,
  type DispatchIntent,
  type LeaseCompletionOutcome,
  type PullQueue,
  type StartedAttempt,
  type TaskRecord,
} from "@tasklane/db";
import type { HeartbeatOutcome } from "@tasklane/db";
import { SpanKind, TaskAttr, endSpan, startTaskSpan, tracingActive } from "@tasklane/observability";
import type { FleetLimits } from "@tasklane/queue";
import { outsideSlot } from "../limits/tenant-operations.js";
import type { ArmedBell, PullDoorbell } from "./pull-doorbell.js";
import type { PullQueueCache } from "./pull-queue-cache.js";
import { PullStartTokens, type StartRate, type StartTokenReports } from "./pull-start-tokens.js";

export interface LeaseArgs {
  queue: string;
  workerId: string;
  max: number;
  leaseSeconds: number;
  waitSeconds: number;
  /** Also lease tasks due within this many ms (held by the worker until their runAt). */
  startAheadMs: number;
}

export interface LeaseServiceDeps extends StartTokenReports {
  db: Database;
  doorbell: PullDoorbell;
  dispatch(intents: DispatchIntent[]): Promise<void>;
  horizonMs: number;
  agingSeconds: number;
  /** Start tokens of rate-limited queues, taken through PullStartTokens (none while Redis cannot answer). */
  limits: FleetLimits;
  queues: PullQueueCache;
}

export type CompletionOutcome =
  | { taskId: string; task?: TaskRecord }
  | { taskId: string; refused: "NOT_FOUND" | "CONFLICT" | "BAD_USER_INPUT"; message: string };

/**
 * Longest sleep between re-checks while long-polling. Work that falls due is
 * waited for exactly (msUntilNextDue); this bounds what rings no bell and has
 * no due time to wait for (a task behind a busy ordering key, a resumed queue).
 */
const POLL_MS = 200;

/** PULL attempts in the task's trace: the lease (an attempt starts) ... */
function traceLeases(leases: StartedAttempt[], tenantId: string, workerId: string): void {
  if (!tracingActive()) return;
  for (const { task } of leases) {
    const attrs = { [TaskAttr.taskId]: task.id, [TaskAttr.tenantId]: tenantId, [TaskAttr.attempt]: task.attempts, [TaskAttr.workerId]: workerId };
    endSpan(startTaskSpan("task.lease", task.traceParent, attrs, SpanKind.SERVER));
  }
}

/** ... and its recorded outcome (the task's trace is known once the outcome statement has returned it). */
function traceOutcome(name: string, task: TaskRecord, startedAt: number): void {
  if (!tracingActive()) return;
  const attrs = { [TaskAttr.taskId]: task.id, [TaskAttr.tenantId]: task.tenantId, [TaskAttr.attempt]: task.attempts, [TaskAttr.outcome]: task.status };
  endSpan(startTaskSpan(name, task.traceParent, attrs, SpanKind.SERVER, startedAt));
}

/**
 * How long until the bucket is full again, given the time to its next token:
 * sleeping longer gathers nothing more (it holds `burst` at most) and only
 * loses rate. With burst 1, sleeping POLL_MS steps woke up to 200 ms past
 * each token: 2/s leased 1.6 a second, 4.76/s (a token every 210 ms) half.
 */
function untilBucketFullMs(nextTokenMs: number, rate: StartRate | null | undefined): number {
  if (!rate) return POLL_MS;
  return Math.max(1, nextTokenMs + ((rate.burst - 1) * 1000) / rate.perSecond);
}

function sleepUnlessAborted(ms: number, abort?: AbortSignal): Promise<void> {
  if (abort?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      abort?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    abort?.addEventListener("abort", done, { once: true });
  });
}

/**
 * A lease as the call answers it: `waitedMs` is how long the call had waited
 * on this gateway before the statement that granted it was sent. A worker that
 * measures its lease from when it sent the call adds it: a long poll's wait is
 * not the lease's time (durations on one clock, so no clock offset enters).
 */
export interface GrantedLease extends StartedAttempt {
  waitedMs: number;
}

/** Pull-mode workers: leases, heartbeats and outcomes, all fenced by the lease token. */
export class LeaseService {
  private readonly tokens: PullStartTokens;
  /** Set by drain(): from then on no call waits. */
  private draining = false;
  /** The wake-up of every long poll in progress, for drain(). */
  private readonly waiting = new Set<AbortController>();
  /** Queues one of whose long polls, on this gateway, sleeps until the start rate's bucket is full again. */
  private readonly rateLeaders = new Set<string>();

  constructor(private readonly deps: LeaseServiceDeps) {
    this.tokens = new PullStartTokens(deps.limits, deps);
  }

  /**
   * Shutdown: every long poll stops waiting at once and answers as if its
   * wait were over (its last look, then what it leased or empty), and calls
   * that come later do not wait either, so the HTTP drain finishes in
   * moments instead of cutting the polls at its grace, as SQS and BullMQ end
   * their long polls on close. An answer written is delivered (the drain
   * waits for it); one that cannot be (the caller gone) hands its leases
   * back as before.
   */
  drain(): void {
    this.draining = true;
    for (const wake of this.waiting) wake.abort();
  }

  /**
   * Returns as soon as at least one task could be leased, or empty when the
   * wait ends (or the gateway starts to shut down: drain()); it never waits to
   * fill `max` (contract). `abort`: the caller went away.
   */
  async lease(tenantId: string, args: LeaseArgs, abort?: AbortSignal): Promise<GrantedLease[]> {
    if (args.waitSeconds <= 0) return this.leaseUntil(tenantId, args, Date.now(), abort, abort);
    // Waits end when the caller goes away or the gateway drains.
    const wake = new AbortController();
    const gone = () => wake.abort();
    this.waiting.add(wake);
    abort?.addEventListener("abort", gone, { once: true });
    if (abort?.aborted || this.draining) wake.abort();
    try {
      return await this.leaseUntil(tenantId, args, Date.now() + args.waitSeconds * 1000, abort, wake.signal);
    } finally {
      this.waiting.delete(wake);
      abort?.removeEventListener("abort", gone);
    }
  }

  private async leaseUntil(tenantId: string, args: LeaseArgs, deadline: number, abort: AbortSignal | undefined, wake: AbortSignal | undefined): Promise<GrantedLease[]> {
    const calledAt = performance.now();
    // A long poll that leases ahead gathers: it leases once some task is due within half its
    // look-ahead, and then every task due within all of it. Answering as soon as one task entered
    // the window cost a call per task for a trickle of delayed tasks (test/bench/findings.md).
    // The call's last look, and a call that does not wait, take whatever the window holds.
    const gatherMs = args.waitSeconds > 0 && args.startAheadMs > 0 ? gatherLeadMs(args.startAheadMs) : null;
    let lastLook = gatherMs === null;
    for (;;) {
      if (abort?.aborted) return [];
      // The queue as it is now, from the gateway's cache (so a wake-up leases at once): a change applies within a second.
      const queue = await this.deps.queues.get(tenantId, args.queue);
      // An unknown queue is refused by leaseFromPullQueue below, before anything waits on this id.
      const queueId = queue?.id ?? "";
      const bell = this.deps.doorbell.arm(queueId);
      try {
        // A queue with a start rate leases without gathering: each gathering look would take tokens only to give them back.
        const onceDueWithinMs = lastLook || queue?.rate ? null : gatherMs;
        // Before the statement is sent: its leases count from a later instant of the database's clock.
        const lookedAt = performance.now();
        const { leases, rateWaitMs } = await this.leaseWithinRate(tenantId, queue, { ...args, onceDueWithinMs });
        // Draining: the wait is over now (one last look if it was gathering, then the answer).
        const left = this.draining ? 0 : deadline - Date.now();
        if (leases.length > 0 && abort?.aborted) {
          // Granted while the caller went away (a Worker stopping aborts its long poll): the answer would reach
          // nobody and the tasks would wait out their leases, charged an attempt that never ran.
          await returnUndeliveredLeases(this.deps.db, tenantId, leases.map((l) => ({ taskId: l.task.id, leaseGeneration: l.task.leaseGeneration })), `worker:${args.workerId}`);
          // Nothing started: their tokens go back too, or each abort costs the queue a share of its rate.
          this.refundStartTokens(tenantId, queue, leases.length);
          return [];
        }
        if (leases.length > 0) {
          traceLeases(leases, tenantId, args.workerId);
          const waitedMs = Math.floor(lookedAt - calledAt);
          for (const lease of leases) (lease as GrantedLease).waitedMs = waitedMs;
          return leases as GrantedLease[];
        }
        if (left <= 0) {
          if (lastLook || onceDueWithinMs === null) return [];
          lastLook = true;
          continue;
        }
        if (rateWaitMs > 0) {
          // Out of tokens with work waiting: not until the bell (a submission brings no token) and not for
          // rateWaitMs (the time to ONE token: waking for each token leased one task per call, ~rate calls a
          // second per worker). One call per queue on this gateway, its rate's leader, sleeps until the bucket
          // is full again (sleeping longer gathers nothing, a bucket holds at most its burst, and loses rate:
          // 2/s with burst 1 leased 1.6 a second in 200 ms steps); the others sleep POLL_MS. Every waiting
          // call waking whenever the bucket was full took ~10 token looks per token for 10 polls (20 polls at
          // 100/s: ~2,000 a second); now about one per token plus five a second per waiting call, as before.
          // Whoever sleeps next leads: the leader's own client, polling again, within its round trip.
          // The queue is still re-read every POLL_MS, so a raised or removed rate applies within the cache's
          // second, not when the old rate's token is due.
          // Asleep without its tenant's slot (limits/tenant-operations.ts): it holds one only while it looks.
          const leads = !this.rateLeaders.has(queueId);
          if (leads) this.rateLeaders.add(queueId);
          try {
            await outsideSlot(() => sleepUnlessAborted(Math.min(left, POLL_MS, leads ? untilBucketFullMs(rateWaitMs, queue?.rate) : POLL_MS), wake));
          } finally {
            if (leads) this.rateLeaders.delete(queueId);
          }
          continue;
        }
        await this.waitForWork(bell, queueId, left, onceDueWithinMs ?? args.startAheadMs, wake);
      } finally {
        bell.disarm();
      }
    }
  }

  /** One lease attempt; when the queue's start rate holds it back, how long until tokens are due. */
  private async leaseWithinRate(
    tenantId: string,
    queue: PullQueue | null,
    args: LeaseArgs & { onceDueWithinMs: number | null },
  ): Promise<{ leases: StartedAttempt[]; rateWaitMs: number }> {
    let max = args.max;
    let rateWaitMs = 0;
    let granted = 0;
    let leased = 0;
    try {
      if (queue?.rate) {
        // The queue's start rate holds for pull leases too (shared bucket with nobody else: PULL queues have no fleet).
        // No tokens while Redis cannot answer (PullStartTokens): the queue leases nothing until it can.
        const tokens = await this.tokens.take(tenantId, queue.id, queue.rate, args.max);
        granted = max = tokens.granted;
        rateWaitMs = tokens.waitMs;
      }
      const leases = max > 0 ? await leaseFromPullQueue(this.deps.db, tenantId, queue, { ...args, max, agingSeconds: this.deps.agingSeconds }) : [];
      leased = leases.length;
      return { leases, rateWaitMs };
    } finally {
      // Tokens are for starts: a poll that found fewer tasks, or whose lease statement failed, gives the rest
      // back, or an idle worker's polls drain the burst before work comes.
      this.refundStartTokens(tenantId, queue, granted - leased);
    }
  }

  private refundStartTokens(tenantId: string, queue: PullQueue | null, count: number): void {
    if (queue?.rate) this.tokens.giveBack(tenantId, queue.id, queue.rate, count);
  }

  /** Until the queue's bell rings or its next task falls due; at most POLL_MS and what is left of the call. */
  private async waitForWork(bell: ArmedBell, queueId: string, leftMs: number, startAheadMs: number, abort?: AbortSignal): Promise<void> {
    const dueInMs = await msUntilNextDue(this.deps.db, queueId, startAheadMs);
    // Rounded up: waking a moment early would find the task not yet due and sleep again.
    // Idle pollers hold no slot of their tenant's share, or they would lock out its own submissions.
    await outsideSlot(() => bell.wait(Math.min(leftMs, POLL_MS, dueInMs === null ? POLL_MS : Math.max(1, Math.ceil(dueInMs))), abort));
  }

  heartbeat(tenantId: string, taskId: string, token: string, extendSeconds: number): Promise<HeartbeatOutcome> {
    return heartbeatLease(this.deps.db, tenantId, taskId, token, extendSeconds);
  }

  async complete(tenantId: string, taskId: string, token: string, result: unknown): Promise<TaskRecord> {
    const problem = resultProblem(result);
    if (problem !== null) throw new BadUserInputError(`result ${problem}`, [{ path: "result", message: problem }]);
    const [outcome] = await this.completeMany(tenantId, [{ taskId, token, result }]);
    if (outcome !== undefined && "refused" in outcome && outcome.refused === "NOT_FOUND") throw new NotFoundError("Task", taskId);
    if (outcome === undefined || "refused" in outcome || outcome.task === undefined) throw new StaleLeaseError();
    return outcome.task;
  }

  /**
   * completeTasks: many outcomes in one call. An item whose result is too large
   * or too deep is refused on its own (BAD_USER_INPUT) so the rest of the batch still lands.
   */
  async completeMany(
    tenantId: string,
    items: { taskId: string; token: string; result: unknown }[],
    /**
     * withTasks: whether outcomes carry their task. bodyBudget: what the answer
     * carrying them has left of its payloads' and results' bytes, lowered by
     * what they take; past it their bodies are withheld (WITHHELD_BODY).
     */
    { withTasks = true, bodyBudget }: { withTasks?: boolean; bodyBudget?: BodyBudget } = {},
  ): Promise<CompletionOutcome[]> {
    const problems = new Map(items.flatMap((i) => {
      const problem = resultProblem(i.result);
      return problem === null ? [] : [[i.taskId, problem] as const];
    }));
    const startedAt = Date.now();
    const bodiless = !withTasks && tracingActive();
    const { outcomes, dispatch, releasedQueueIds } = await completeLeases(
      this.deps.db,
      tenantId,
      items.filter((i) => !problems.has(i.taskId)).map((i) => ({ ...i, result: i.result ?? null })),
      this.deps.horizonMs,
      // An outcome's span needs its task's state and trace, not its payload and result.
      withTasks ? (bodyBudget ?? true) : bodiless ? "bodiless" : false,
    );
    for (const o of outcomes) if (!("refused" in o) && o.task !== undefined) traceOutcome("task.complete", o.task, startedAt);
    // A task without its bodies is the span's alone: never an answer's.
    if (bodiless) for (const o of outcomes) if (!("refused" in o)) delete o.task;
    await this.deps.dispatch(dispatch);
    if (releasedQueueIds.length > 0) await this.deps.doorbell.ring(releasedQueueIds).catch(() => undefined);
    const byId = new Map(outcomes.map((o) => [o.taskId, o]));
    return items.map((i): CompletionOutcome => {
      const problem = problems.get(i.taskId);
      if (problem !== undefined) return { taskId: i.taskId, refused: "BAD_USER_INPUT", message: `result ${problem}` };
      const o = byId.get(i.taskId) as LeaseCompletionOutcome;
      if (!("refused" in o)) return o;
      return { taskId: i.taskId, refused: o.refused, message: o.refused === "NOT_FOUND" ? new NotFoundError("Task").message : new StaleLeaseError().message };
    });
  }

  async fail(tenantId: string, taskId: string, token: string, error: string, retryable: boolean): Promise<TaskRecord> {
    const startedAt = Date.now();
    const { task, dispatch } = await failLease(this.deps.db, tenantId, taskId, token, error, retryable, this.deps.horizonMs);
    traceOutcome("task.fail", task, startedAt);
    await this.deps.dispatch(dispatch);
    if (task.status === "RETRYING") await this.deps.doorbell.ring([task.queueId]).catch(() => undefined);
    return task;
  }
}

/** Why a result is refused (the limits a payload has: MAX_RESULT_BYTES, MAX_JSON_DEPTH), or null. */
function resultProblem(result: unknown): string | null {
  return result === undefined ? null : jsonLimitViolation(result, { maxBytes: MAX_RESULT_BYTES, maxDepth: MAX_JSON_DEPTH });
}
