/**
 * One platform under test: its own redis-server, a fresh database (on the
 * shared PostgreSQL or the suite's own instance), and the apps as child
 * processes. Faults go through here so each one lands in the history.
 */
import { randomBytes } from "node:crypto";
import { spawnApp, type AppName, type AppProcess } from "./apps.js";
import { gql, untilAnswered, type ErrorTally } from "./api.js";
import { createTestDatabase, type TestDatabase } from "../../../helpers/test-database.js";
import type { History } from "./history.js";
import { freePort, startPostgresServer, startRedisServer, type PostgresServer, type RedisServer } from "./services.js";
import { waitUntil } from "./wait.js";

const SHARED_PG_ADMIN = process.env.CHAOS_DATABASE_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface ClusterOptions {
  label: string;
  history: History;
  /** Run PostgreSQL as the suite's own instance (needed to restart it). */
  ownPostgres?: boolean;
  /** Environment for every app (short intervals, retry schedules). */
  env?: Record<string, string>;
}

export interface Tenant {
  id: string;
  apiKey: string;
}

export class Cluster {
  readonly apps: AppProcess[] = [];
  readonly tally: ErrorTally = new Map();
  gatewayUrl = "";
  private gatewayPort = 0;
  private serial = 0;
  private readonly killed = new Set<AppProcess>();
  readonly adminToken = `chaos-admin-${randomBytes(12).toString("hex")}`;

  private constructor(
    readonly opts: ClusterOptions,
    readonly redis: RedisServer,
    readonly database: TestDatabase,
    readonly postgres: PostgresServer | undefined,
  ) {}

  static async start(opts: ClusterOptions): Promise<Cluster> {
    const [redis, postgres] = await Promise.all([startRedisServer(), opts.ownPostgres ? startPostgresServer() : Promise.resolve(undefined)]);
    const database = await createTestDatabase(`chaos_${opts.label}`, postgres?.adminUrl ?? SHARED_PG_ADMIN);
    return new Cluster(opts, redis, database, postgres);
  }

  get history(): History {
    return this.opts.history;
  }

  private env(extra: Record<string, string>): Record<string, string> {
    return {
      DATABASE_URL: this.database.url,
      REDIS_URL: this.redis.url,
      REDIS_KEY_PREFIX: "chaos",
      ALLOW_PRIVATE_TARGETS: "1",
      LOG_LEVEL: "warn",
      RECONCILE_INTERVAL_SECONDS: "1",
      ...this.opts.env,
      ...extra,
    };
  }

  /** Starts one app under a fresh executor id (never reused, so kills match attempts); no wait. */
  spawn(name: AppName, extra: Record<string, string> = {}): AppProcess {
    const id = `${this.opts.label}-${name}-${++this.serial}`;
    const app = spawnApp(name, id, this.env(extra));
    this.apps.push(app);
    return app;
  }

  /**
   * Starts a scheduler, worker or notifier and waits until its ops server says
   * it is alive: a fault must never hit a process still starting (a start-up
   * that cannot reach Postgres exits by design).
   */
  async start(name: "scheduler" | "worker" | "notifier", extra: Record<string, string> = {}): Promise<AppProcess> {
    const port = await freePort();
    const app = this.spawn(name, { ...extra, METRICS_PORT: String(port) });
    await waitUntil(`${app.id} /livez`, async () => {
      if (!app.alive()) throw new Error(`${app.id} exited: ${app.output().slice(-2000)}`);
      return (await fetch(`http://127.0.0.1:${port}/livez`)).status === 200;
    }, 60_000, 100);
    return app;
  }

  /** How long each gateway start took (spawn → /healthz 200), for the report. */
  readonly gatewayStartsMs: number[] = [];

  async startGateway(): Promise<AppProcess> {
    const t0 = Date.now();
    if (this.gatewayPort === 0) this.gatewayPort = await freePort();
    const app = this.spawn("gateway", { PORT: String(this.gatewayPort), HOST: "127.0.0.1", ADMIN_TOKEN: this.adminToken, GLOBAL_MAX_PENDING_TASKS: "10000000" });
    this.gatewayUrl = `http://127.0.0.1:${this.gatewayPort}/graphql`;
    await waitUntil("gateway /healthz", async () => {
      if (!app.alive()) throw new Error(`gateway exited: ${app.output().slice(-2000)}`);
      return (await fetch(`http://127.0.0.1:${this.gatewayPort}/healthz`)).status === 200;
    }, 60_000, 100);
    this.gatewayStartsMs.push(Date.now() - t0);
    return app;
  }

  /** SIGKILL, recorded as a fault naming the executor. */
  kill(app: AppProcess, fault = "kill"): void {
    this.killed.add(app);
    this.history.record({ kind: "fault", fault, target: app.name, workerId: app.id });
    app.signal("SIGKILL");
  }

  /** SIGSTOP now; SIGCONT after `ms`, recorded as the outage's end. */
  async freeze(app: AppProcess, ms: number): Promise<void> {
    this.history.record({ kind: "fault", fault: "stop", target: app.name, workerId: app.id });
    app.signal("SIGSTOP");
    await new Promise((r) => setTimeout(r, ms));
    app.signal("SIGCONT");
    this.history.record({ kind: "restored", target: app.name });
  }

  async createTenant(name: string, limits: Record<string, unknown> = {}): Promise<Tenant> {
    const data = await untilAnswered(
      () =>
        gql<{ createTenant: { tenant: { id: string }; apiKey: string } }>(
          this.gatewayUrl,
          `mutation ($input: CreateTenantInput!) { createTenant(input: $input) { tenant { id } apiKey } }`,
          { input: { name, limits: { apiRatePerSecond: 1_000_000, apiBurst: 1_000_000, ...limits } } },
          this.adminToken,
        ),
      this.tally,
      "createTenant",
    );
    return { id: data.createTenant.tenant.id, apiKey: data.createTenant.apiKey };
  }

  async upsertQueue(tenant: Tenant, input: Record<string, unknown>): Promise<void> {
    await untilAnswered(
      () => gql(this.gatewayUrl, `mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: input }, tenant.apiKey),
      this.tally,
      "upsertQueue",
    );
  }

  /** Ends every process this cluster started, then its services and database. */
  async close(): Promise<void> {
    await Promise.all(this.apps.map((a) => a.stop(5_000)));
    await this.database.drop().catch(() => undefined);
    await this.redis.stop();
    await this.postgres?.stop();
  }

  /** Processes that exited without the suite killing them, with the end of their output (for the report). */
  unexpectedExits(): { id: string; output: string }[] {
    return this.apps.filter((a) => !a.alive() && !this.killed.has(a) && a.name !== "pull-worker").map((a) => ({ id: `${a.id} (ran ${a.startedAt} → ${a.exitedAt})`, output: a.output().slice(0, 2_500) }));
  }

  /** The live processes of one kind. */
  running(name: AppName): AppProcess[] {
    return this.apps.filter((a) => a.name === name && a.alive());
  }
}
