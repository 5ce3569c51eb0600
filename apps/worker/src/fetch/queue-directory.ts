import { SIGNING_SECRET_ROTATIONS_CHANNEL, startRateOf } from "@tasklane/core";
import { listenForWakeups, type Database, type Wakeups } from "@tasklane/db";

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

/** Shortest time between two early reloads (requestReload). */
const EARLY_RELOAD_GAP_MS = 200;

/**
 * PUSH queue settings, reloaded every second so limit and pause changes take
 * effect within 1 s (the contract's promise) without a query per task.
 *
 * A signing-secret rotation cannot wait for that second: a receiver told the
 * new secret by rotateSigningSecret may verify with it alone at once. The
 * rotation NOTIFYs at commit, the directory reloads on it, and an attempt
 * about to sign waits for that reload (whenCurrent). While the LISTEN
 * session is down, the periodic reload is all there is (up to 1 s).
 */
export class QueueDirectory {
  private byId = new Map<string, PushQueueInfo>();
  private timer: NodeJS.Timeout | undefined;
  private rotations: Wakeups | undefined;
  private reloading: Promise<void> | undefined;
  /** Reloads are numbered as they start: one that started earlier never overwrites a later one's answer. */
  private started = 0;
  private applied = 0;
  private readonly listeners = new Set<() => void>();
  /** An early reload asked for (requestReload) and not yet begun. */
  private early: NodeJS.Timeout | undefined;
  private lastEarly = 0;

  constructor(
    private readonly db: Database,
    private readonly onError: (error: unknown) => void,
    private readonly onRefreshed: () => void = () => undefined,
  ) {}

  async start(refreshMs = 1000): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().then(this.onRefreshed, this.onError), refreshMs);
    this.timer.unref();
    const url = this.db.pool.options.connectionString;
    if (url === undefined) return;
    this.rotations = listenForWakeups({
      url,
      channel: { name: SIGNING_SECRET_ROTATIONS_CHANNEL, applicationName: "tasklane-worker-secret-rotations" },
      // Also called when the session (re)opens: a rotation committed while nobody listened is loaded then.
      onWake: () => this.reloadNow(),
      onError: this.onError,
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.early) clearTimeout(this.early);
    void this.rotations?.close();
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
   * know (created a moment ago; its first task waited up to a second). Asks
   * are coalesced into one reload at a time, at most one per EARLY_RELOAD_GAP_MS,
   * so a queue that stays unknown (a PULL queue with jobs left from its PUSH
   * days) costs no more than that.
   */
  requestReload(): void {
    if (this.early !== undefined) return;
    const wait = Math.max(0, this.lastEarly + EARLY_RELOAD_GAP_MS - Date.now());
    this.early = setTimeout(() => {
      this.lastEarly = Date.now();
      void this.refresh()
        .then(this.onRefreshed, this.onError)
        .finally(() => {
          this.early = undefined;
        });
    }, wait);
    this.early.unref();
  }

  /** Settles when a reload a rotation asked for is done; undefined when none is under way, as nearly always. */
  whenCurrent(): Promise<void> | undefined {
    return this.reloading;
  }

  private reloadNow(): void {
    const reload: Promise<void> = this.refresh()
      .then(this.onRefreshed, this.onError)
      .finally(() => {
        if (this.reloading === reload) this.reloading = undefined;
      });
    this.reloading = reload;
  }

  async refresh(): Promise<void> {
    const number = ++this.started;
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
