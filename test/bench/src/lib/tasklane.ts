import { queueStatusCounts } from "@tasklane/db";
import { DEFAULT_LEASE_AHEAD_MS, DEFAULT_START_AHEAD_MS, type SubmitTaskInput } from "@tasklane/sdk";
import { CONSUMER_CONCURRENCY } from "./concurrency.js";
import { log } from "./progress.js";
import { Probe } from "./probe.js";
import { redisServerProcess } from "./redis.js";
import type { TasklanePlatform, Tenant } from "./platform.js";
import type { BenchDatabase } from "./postgres.js";
import type { BenchSystem, TaskRequest, WatchedProcess } from "./system.js";

export const TASKLANE_SETTINGS =
  `defaults except slots: one gateway, one scheduler, one notifier (its event relay follows every task event; while nobody listens it passes them once a second without reading them, and the bench opens no subscriptions, so it publishes none), one worker process (WORKER_CONCURRENCY ${CONSUMER_CONCURRENCY}; its default is 100); SDK Worker concurrency ${CONSUMER_CONCURRENCY} (leases up to 100 per call, up to 3 lease calls in flight while a backlog lasts, long poll 5 s, delayed tasks leased up to ${DEFAULT_LEASE_AHEAD_MS} ms ahead, gathered once one is due within ${DEFAULT_LEASE_AHEAD_MS / 2}, and started at runAt); PUSH worker starts delayed tasks up to ${DEFAULT_START_AHEAD_MS} ms ahead (WORKER_START_AHEAD_MS), gathered once one is due within ${DEFAULT_START_AHEAD_MS / 2}, and sends each at its runAt`;

const UNFINISHED = ["SCHEDULED", "BLOCKED", "QUEUED", "RUNNING", "RETRYING"];

/** Tasklane through its public API: a PUSH queue served by the worker fleet, or a PULL queue served by the SDK Worker. */
export class TasklaneSystem implements BenchSystem {
  probe: Probe | undefined;
  private queueId: string | undefined;
  private ownsProbe = true;

  private constructor(
    readonly label: string,
    private readonly platform: TasklanePlatform,
    private readonly tenant: Tenant,
    private readonly mode: "PUSH" | "PULL",
    private readonly queue: string,
    receiver: Probe | undefined,
  ) {
    this.probe = receiver;
  }

  /**
   * A PUSH queue whose endpoint is a receiver probe (a fresh one unless
   * `receiver` is given, which then stays the caller's to stop); the worker
   * fleet is the consumer.
   */
  static async push(platform: TasklanePlatform, tenant: Tenant, opts: { queue?: string; label?: string; receiver?: Probe } = {}): Promise<TasklaneSystem> {
    const queue = opts.queue ?? "bench-push";
    const receiver = opts.receiver ?? (await Probe.start(`receiver-${queue}`, { role: "push-receiver" }));
    await tenant.client.queues.upsert({ name: queue, mode: "PUSH", endpointUrl: receiver.url });
    const system = new TasklaneSystem(opts.label ?? "Tasklane PUSH", platform, tenant, "PUSH", queue, receiver);
    system.ownsProbe = opts.receiver === undefined;
    return system;
  }

  /** The tenant's "default" PULL queue; the consumer is an SDK Worker in its own process. */
  static pull(platform: TasklanePlatform, tenant: Tenant, label = "Tasklane PULL"): TasklaneSystem {
    return new TasklaneSystem(label, platform, tenant, "PULL", "default", undefined);
  }

  get database(): BenchDatabase {
    return this.platform.db;
  }

  get tenantId(): string {
    return this.tenant.tenantId;
  }

  async submitMany(tasks: TaskRequest[]): Promise<string[]> {
    // Only the ids are read back, so only they are asked for (submitManyIds), as a producer would.
    return this.tenant.client.tasks.submitManyIds(tasks.map((t) => this.input(t)));
  }

  async submitOne(task: TaskRequest): Promise<string> {
    return (await this.tenant.client.tasks.submit(this.input(task))).id;
  }

  async startConsumers(): Promise<void> {
    if (this.mode === "PUSH") {
      this.platform.startWorker();
      return;
    }
    this.probe ??= await Probe.start(`pull-worker-${this.queue}`, {
      role: "pull-worker",
      url: this.platform.gatewayUrl,
      apiKey: this.tenant.apiKey,
      queue: this.queue,
      concurrency: CONSUMER_CONCURRENCY,
    });
  }

  async unfinished(): Promise<number> {
    return this.count(UNFINISHED);
  }

  async failed(): Promise<number> {
    return this.count(["DEAD"]);
  }

  async acceptedAt(ids: string[]): Promise<Map<string, number>> {
    const res = await this.platform.db.pool.query<{ id: string; created_at: Date }>("SELECT id, created_at FROM tasks WHERE id = ANY($1::text[])", [ids]);
    return new Map(res.rows.map((r) => [r.id, r.created_at.getTime()]));
  }

  async lastFinishedAt(): Promise<number | undefined> {
    const res = await this.platform.db.pool.query<{ at: Date | null }>("SELECT max(completed_at) AS at FROM tasks WHERE queue_id = $1", [await this.ensureQueueId()]);
    return res.rows[0]?.at?.getTime() ?? undefined;
  }

  assertAlive(): void {
    this.platform.assertAllRunning();
    this.probe?.assertAlive();
  }

  processes(): WatchedProcess[] {
    const own = this.probe ? [{ label: this.mode === "PUSH" ? "PUSH endpoint (receiver)" : "SDK pull worker", pid: this.probe.pid }] : [];
    return [...this.platform.processes(), ...own, ...redisServerProcess()];
  }

  async close(): Promise<void> {
    if (this.probe?.error) log(this.label, `probe reported: ${this.probe.error.split("\n")[0]}`);
    if (this.ownsProbe) await this.probe?.stop();
    this.probe = undefined;
  }

  private input(t: TaskRequest): SubmitTaskInput {
    const fields = { type: "noop", queue: this.queue, payload: t.ref === undefined ? {} : { ref: t.ref } };
    return t.runAt === undefined ? fields : { ...fields, runAt: new Date(t.runAt) };
  }

  /**
   * From the counts the platform keeps per queue and status (queueStatusCounts,
   * what Queue.stats reads): the harness polls this every 100 ms, and a
   * `count(*)` over `tasks` would read every task of every run so far, taking
   * CPU from the system it measures.
   */
  private async count(statuses: readonly string[]): Promise<number> {
    const counts = await queueStatusCounts(this.platform.db.pool, [await this.ensureQueueId()]);
    return counts.filter((c) => statuses.includes(c.status)).reduce((sum, c) => sum + c.tasks, 0);
  }

  private async ensureQueueId(): Promise<string> {
    if (this.queueId) return this.queueId;
    const res = await this.platform.db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [this.tenant.tenantId, this.queue]);
    const id = res.rows[0]?.id;
    if (!id) throw new Error(`queue ${this.queue} of ${this.tenant.tenantId} not found`);
    this.queueId = id;
    return id;
  }
}
