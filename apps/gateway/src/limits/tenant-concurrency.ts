/**
 * Per-tenant bound on concurrent operations in one gateway (pure: no I/O, only timers).
 *
 * Why: the API rate limit charges one token per call whatever it costs, so a
 * tenant far below its rate (QA t10: 16 loops of `tasks(first: 500)` with
 * payloads over 50,000 tasks, ~6 calls/s against 200/s) held all of the
 * gateway's pool connections, and every other tenant's calls waited behind
 * them (B's submit-then-read p50 22-34 ms -> ~2,800 ms). A tenant may now run
 * at most `share` operations at once; further ones wait in the tenant's own
 * FIFO, at most MAX_WAITING of them and for at most MAX_WAIT_MS, and past
 * either are refused (RATE_LIMITED, retry after RETRY_AFTER_SECONDS) before
 * anything of them ran. Like Cloud Tasks' and Hatchet's per-tenant
 * concurrency, the share is not work-conserving: a tenant alone on a gateway
 * still runs at most `share` at once, so a neighbour arriving finds the rest of
 * the pool free instead of queued behind long reads already running.
 *
 * No library: p-limit/p-queue bound concurrency of one queue but neither keys
 * queues by tenant, bounds the waiting list or times a wait out; those are
 * the whole of this.
 */

/** Waiting operations per tenant and gateway before further ones are refused. Above 50 parallel clients of one tenant (docs/security.md). */
export const MAX_WAITING = 100;
/** Longest wait for a slot before the operation is refused. */
export const MAX_WAIT_MS = 5_000;
/** What a refusal asks the client to wait: a slot frees as soon as one of the tenant's operations ends. */
export const RETRY_AFTER_SECONDS = 1;
/** The fewest operations a tenant may run at once, whatever the pool. */
export const MIN_SHARE = 2;

/**
 * Operations one tenant may run at once: `fraction` of the pool's connections,
 * rounded up, at least MIN_SHARE (and never more than the pool).
 * @defaultValue fraction 0.25: 3 of the gateway's 10 connections.
 */
export function tenantShare(poolSize: number, fraction: number): number {
  if (!(poolSize >= 1) || !(fraction > 0)) throw new RangeError(`tenantShare: pool ${poolSize}, fraction ${fraction}`);
  return Math.min(Math.max(poolSize, MIN_SHARE), Math.max(MIN_SHARE, Math.ceil(poolSize * fraction)));
}

export type RefusalReason = "queue_full" | "wait_timeout";

export class ConcurrencyRefusal extends Error {
  constructor(readonly reason: RefusalReason) {
    super(reason === "queue_full" ? "too many operations waiting for this tenant" : "waited too long for a slot");
    this.name = "ConcurrencyRefusal";
  }
}

export interface GateOptions {
  share: number;
  maxWaiting?: number;
  maxWaitMs?: number;
  /** Called when an operation starts and stops waiting (for a gauge), and when one is refused. */
  onWait?(delta: 1 | -1): void;
  onRefusal?(reason: RefusalReason): void;
}

interface Waiter {
  grant(): void;
  timer: NodeJS.Timeout;
}

interface Lane {
  running: number;
  waiting: Waiter[];
}

/** Keyed FIFO semaphores: `acquire(key)` resolves with a slot, or rejects with a ConcurrencyRefusal. */
export class TenantGate {
  readonly share: number;
  readonly #maxWaiting: number;
  readonly #maxWaitMs: number;
  readonly #lanes = new Map<string, Lane>();

  constructor(private readonly opts: GateOptions) {
    this.share = opts.share;
    this.#maxWaiting = opts.maxWaiting ?? MAX_WAITING;
    this.#maxWaitMs = opts.maxWaitMs ?? MAX_WAIT_MS;
  }

  /** Operations running and waiting for `key` now (tests, diagnostics). */
  load(key: string): { running: number; waiting: number } {
    const lane = this.#lanes.get(key);
    return { running: lane?.running ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  /** Resolves once `key` may run one more operation; the caller must release(key) exactly once after. */
  acquire(key: string): Promise<void> {
    let lane = this.#lanes.get(key);
    if (lane === undefined) this.#lanes.set(key, (lane = { running: 0, waiting: [] }));
    // FIFO: a newcomer never overtakes an operation already waiting.
    if (lane.running < this.share && lane.waiting.length === 0) {
      lane.running += 1;
      return Promise.resolve();
    }
    if (lane.waiting.length >= this.#maxWaiting) return this.#refuse(key, "queue_full");
    const queued = lane;
    this.opts.onWait?.(1);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(waiter.timer);
          this.opts.onWait?.(-1);
          resolve();
        },
        timer: setTimeout(() => {
          const at = queued.waiting.indexOf(waiter);
          if (at >= 0) queued.waiting.splice(at, 1);
          this.opts.onWait?.(-1);
          this.#forgetIfIdle(key, queued);
          this.#refuse(key, "wait_timeout").catch(reject);
        }, this.#maxWaitMs),
      };
      queued.waiting.push(waiter);
    });
  }

  release(key: string): void {
    const lane = this.#lanes.get(key);
    if (lane === undefined || lane.running === 0) throw new Error(`TenantGate: release without a slot for ${key}`);
    const next = lane.waiting.shift();
    // The slot passes straight to the next waiter: running stays as it is.
    if (next !== undefined) return next.grant();
    lane.running -= 1;
    this.#forgetIfIdle(key, lane);
  }

  #forgetIfIdle(key: string, lane: Lane): void {
    if (lane.running === 0 && lane.waiting.length === 0 && this.#lanes.get(key) === lane) this.#lanes.delete(key);
  }

  #refuse(_key: string, reason: RefusalReason): Promise<never> {
    this.opts.onRefusal?.(reason);
    return Promise.reject(new ConcurrencyRefusal(reason));
  }
}
