import type { Database } from "@tasklane/db";

/** What the fleet needs to know about one PUSH queue and its tenant. */
export interface PushQueueInfo {
  queueId: string;
  tenantId: string;
  endpointUrl: string;
  paused: boolean;
  concurrency: number | null;
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
  ) {}

  async start(refreshMs = 1000): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch(this.onError), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  get(queueId: string): PushQueueInfo | undefined {
    return this.byId.get(queueId);
  }

  async refresh(): Promise<void> {
    const res = await this.db.pool.query(
      `SELECT q.id, q.tenant_id, q.endpoint_url, q.paused, q.concurrency, t.weight, t.max_concurrency,
              t.signing_secret, t.previous_signing_secret, (t.previous_secret_expires_at > now()) AS previous_valid
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
        tenantWeight: r.weight as number,
        tenantMaxConcurrency: (r.max_concurrency as number | null) ?? null,
        signingSecrets: secrets,
      });
    }
    this.byId = next;
  }
}
