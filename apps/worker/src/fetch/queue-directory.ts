import { startRateOf } from "@tasklane/core";
import type { Database } from "@tasklane/db";

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
 * PUSH queue settings, reloaded every second so limit and pause changes take
 * effect within 1 s (the contract's promise) without a query per task.
 */
export class QueueDirectory {
  private byId = new Map<string, PushQueueInfo>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database,
    private readonly onError: (error: unknown) => void,
    private readonly onRefreshed: () => void = () => undefined,
  ) {}

  async start(refreshMs = 1000): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().then(this.onRefreshed, this.onError), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get(queueId: string): PushQueueInfo | undefined {
    return this.byId.get(queueId);
  }

  async refresh(): Promise<void> {
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
    this.byId = next;
  }
}
