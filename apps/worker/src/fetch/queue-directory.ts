import { SIGNING_SECRET_ROTATIONS_CHANNEL, startRateOf } from "@tasklane/core";
import { listenForWakeups, type Database, type WakeupOptions, type Wakeups } from "@tasklane/db";

/** What the fleet needs to know about one PUSH queue and its tenant. */
export interface PushQueueInfo {
  queueId: string;
  tenantId: string;
  endpointUrl: string;
  paused: boolean;
  concurrency: number | null;
  /** Token bucket on starts; null = unlimited. */
  rateLimit: { perSecond: number; burst: number } | null;
  tenantWeight: number;
  tenantMaxConcurrency: number | null;
  signingSecrets: string[];
}

/**
 * Shortest time between two early reloads (requestReload). Every queue the
 * directory never learns (a PULL queue with jobs left from its PUSH days) asks
 * again every 10 s; at 200 ms enough of them kept a worker at 5 full reloads a
 * second beside the periodic one.
 */
const EARLY_RELOAD_GAP_MS = 1_000;
/** An early reload this close to the periodic one is left to it. */
const PERIODIC_SOON_MS = 200;
/** How long stop() waits for the LISTEN session and a reload under way: a shutdown must not hang on an unreachable Postgres. */
const STOP_WAIT_MS = 2_000;

/** Opens the LISTEN session for rotations (a seam for the unit tests; listenForWakeups otherwise). */
export type ListenForRotations = (options: Pick<WakeupOptions, "url" | "channel" | "onWake" | "onError">) => Wakeups;

/**
 * PUSH queue settings, reloaded every second so limit and pause changes take
 * effect within 1 s (the contract's promise) without a query per task.
 *
 * A signing-secret rotation cannot wait for that second: a receiver told the
 * new secret by rotateSigningSecret may verify with it alone at once. The
 * rotation NOTIFYs at commit, the directory reloads on it, and an attempt
 * about to sign waits for that reload (whenCurrent). While the LISTEN
 * session is down, the periodic reload is all there is (up to 1 s).
 *
 * Reloads never overlap: one runs, and whatever asks meanwhile (rotations,
 * early asks) gets exactly one more after it. Rotations come in bursts (one
 * request can rotate many times through aliases) and the reload shares the
 * worker's 10-connection pool with start and complete statements.
 */
export class QueueDirectory {
  private byId = new Map<string, PushQueueInfo>();
  private timer: NodeJS.Timeout | undefined;
  private nextPeriodicAt = 0;
  private rotations: Wakeups | undefined;
  /** The reload under way, and whether another was asked for while it ran. */
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  /** Rotations heard, and how many of them the latest finished reload started after. */
  private heard = 0;
  private covered = 0;
  private waiters: { upTo: number; settle: () => void }[] = [];
  /** Reloads are numbered as they start: one that started earlier never overwrites a later one's answer. */
  private started = 0;
  private applied = 0;
  private readonly listeners = new Set<() => void>();
  /** An early reload asked for (requestReload) and not yet begun. */
  private early: NodeJS.Timeout | undefined;
  private lastEarly = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly db: Database,
    private readonly onError: (error: unknown) => void,
    private readonly onRefreshed: () => void = () => undefined,
    /** The LISTEN session's failures and recoveries, logged apart from the refresh's: one failing while the other works must not reset its log. */
    private readonly session: { failed: (error: unknown) => void; succeeded: () => void } = { failed: onError, succeeded: () => undefined },
    private readonly listen: ListenForRotations = listenForWakeups,
  ) {}

  async start(refreshMs = 1000): Promise<void> {
    await this.refresh();
    this.nextPeriodicAt = Date.now() + refreshMs;
    this.timer = setInterval(() => {
      this.nextPeriodicAt = Date.now() + refreshMs;
      // One under way is as fresh as this one would be.
      if (this.running === undefined) this.reload();
    }, refreshMs);
    this.timer.unref();
    const url = this.db.pool.options.connectionString;
    if (url === undefined) return;
    this.rotations = this.listen({
      url,
      channel: { name: SIGNING_SECRET_ROTATIONS_CHANNEL, applicationName: "tasklane-worker-secret-rotations" },
      // Also called when the session (re)opens: a rotation committed while nobody listened is loaded then.
      onWake: () => {
        this.session.succeeded();
        this.heard++;
        this.reload();
      },
      onError: this.session.failed,
    });
  }

  /** Settles once the LISTEN session is closed and no reload runs, or after STOP_WAIT_MS whatever hangs. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.early) clearTimeout(this.early);
    this.settleWaiters(Number.POSITIVE_INFINITY);
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (deadline = setTimeout(resolve, STOP_WAIT_MS)));
    const closed = Promise.all([this.rotations?.close().catch(() => undefined), this.running]);
    await Promise.race([closed, late]);
    clearTimeout(deadline);
  }

  get(queueId: string): PushQueueInfo | undefined {
    return this.byId.get(queueId);
  }

  /** Called after each reload is applied, with the new settings in place. */
  onChange(listener: () => void): void {
    this.listeners.add(listener);
  }

  /**
   * Reload before the next periodic one: the fetcher met a queue it does not
   * know (created a moment ago; its first task waited up to a second). At most
   * one early reload per EARLY_RELOAD_GAP_MS, and none when the periodic one
   * comes within PERIODIC_SOON_MS of when it would: a worker reloads at most
   * twice a second however many queues stay unknown.
   */
  requestReload(): void {
    if (this.early !== undefined || this.stopped) return;
    const now = Date.now();
    const wait = Math.max(0, this.lastEarly + EARLY_RELOAD_GAP_MS - now);
    if (now + wait > this.nextPeriodicAt - PERIODIC_SOON_MS) return;
    this.early = setTimeout(() => {
      this.early = undefined;
      this.lastEarly = Date.now();
      this.reload();
    }, wait);
    this.early.unref();
  }

  /**
   * Settles when a reload that started after the latest rotation heard has
   * finished (or failed: the periodic reload is then what loads it); undefined
   * when there is none to wait for, as nearly always.
   */
  whenCurrent(): Promise<void> | undefined {
    if (this.covered >= this.heard || this.stopped) return undefined;
    const upTo = this.heard;
    return new Promise((settle) => this.waiters.push({ upTo, settle }));
  }

  /** Starts a reload, or, with one under way, makes sure exactly one more starts after it. */
  private reload(): void {
    if (this.stopped) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.refresh().then(this.onRefreshed, this.onError);
      } while (this.again && !this.stopped);
      this.running = undefined;
    })();
  }

  private settleWaiters(covered: number): void {
    this.covered = Math.max(this.covered, covered);
    const still = [];
    for (const waiter of this.waiters) {
      if (waiter.upTo <= this.covered) waiter.settle();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  async refresh(): Promise<void> {
    const number = ++this.started;
    const covers = this.heard;
    try {
      await this.load(number);
    } finally {
      this.settleWaiters(covers);
    }
  }

  private async load(number: number): Promise<void> {
    // PULL attempts count against the tenant's maxConcurrency too; the fleet
    // leaves room for those running now (refreshed every second).
    const res = await this.db.pool.query(
      `SELECT q.id, q.tenant_id, q.endpoint_url, q.paused, q.concurrency, q.rate_limit_per_second, q.rate_limit_burst,
              t.weight, t.max_concurrency, t.signing_secret, t.previous_signing_secret,
              (t.previous_secret_expires_at > now()) AS previous_valid,
              CASE WHEN t.max_concurrency IS NULL THEN 0 ELSE (
                SELECT count(*) FROM tasks r JOIN queues rq ON rq.id = r.queue_id
                WHERE r.tenant_id = t.id AND r.status = 'RUNNING' AND rq.mode = 'PULL') END AS pull_running
       FROM queues q JOIN tenants t ON t.id = q.tenant_id WHERE q.mode = 'PUSH'`,
    );
    const next = new Map<string, PushQueueInfo>();
    for (const r of res.rows) {
      const secrets = [r.signing_secret as string];
      if (r.previous_valid && r.previous_signing_secret) secrets.push(r.previous_signing_secret as string);
      next.set(r.id as string, {
        queueId: r.id as string,
        tenantId: r.tenant_id as string,
        endpointUrl: r.endpoint_url as string,
        paused: r.paused as boolean,
        concurrency: (r.concurrency as number | null) ?? null,
        rateLimit: startRateOf(r.rate_limit_per_second as number | null, r.rate_limit_burst as number | null),
        tenantWeight: r.weight as number,
        tenantMaxConcurrency: r.max_concurrency == null ? null : Math.max(0, (r.max_concurrency as number) - Number(r.pull_running)),
        signingSecrets: secrets,
      });
    }
    if (number < this.applied) return;
    this.applied = number;
    this.byId = next;
    for (const listener of this.listeners) listener();
  }
}
