import { randomBytes } from "node:crypto";
import path from "node:path";
import { TasklaneClient } from "@tasklane/sdk";
import { appStartCommand } from "../../../../scripts/app-start.mjs";
import { CONSUMER_CONCURRENCY } from "./concurrency.js";
import { log } from "./progress.js";
import { createBenchDatabase, type BenchDatabase } from "./postgres.js";
import { freePort, repoRoot, spawnNode, type RunningProcess } from "./processes.js";
import { BENCH_REDIS_URL, flushBenchRedis } from "./redis.js";
import type { WatchedProcess } from "./system.js";
import { GiveUp, waitUntil } from "./time.js";

export type AppName = "gateway" | "scheduler" | "notifier" | "worker";

export interface PlatformOptions {
  /** Start the PUSH worker fleet now (otherwise: startWorker() later, or never). */
  worker: boolean;
  /** Apps to run under node --cpu-prof. */
  profile: readonly string[];
}

export interface Tenant {
  tenantId: string;
  apiKey: string;
  client: TasklaneClient;
}

/** Every Redis key of the bench's Tasklane deployment starts with this. */
export const TASKLANE_PREFIX = "tlb";

/**
 * The real platform, the way production runs it: one process per app
 * (each app as its start script runs it, apps/<name>/dist/bundle/main.js) on a fresh database and the bench's Redis DB,
 * LOG_LEVEL=warn, talking to the harness through the public GraphQL API.
 */
export class TasklanePlatform {
  private readonly apps = new Map<AppName, RunningProcess>();

  private constructor(
    readonly db: BenchDatabase,
    readonly gatewayUrl: string,
    readonly adminToken: string,
    private readonly env: Record<string, string>,
    private readonly profile: readonly string[],
  ) {}

  static async start(opts: PlatformOptions): Promise<TasklanePlatform> {
    const db = await createBenchDatabase();
    await flushBenchRedis();
    const port = await freePort();
    const adminToken = `bench-admin-${randomBytes(16).toString("hex")}`;
    const env = {
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      REDIS_URL: BENCH_REDIS_URL,
      REDIS_KEY_PREFIX: TASKLANE_PREFIX,
      ALLOW_PRIVATE_TARGETS: "1",
      LOG_LEVEL: "warn",
      HOST: "127.0.0.1",
      PORT: String(port),
      ADMIN_TOKEN: adminToken,
      WORKER_CONCURRENCY: String(CONSUMER_CONCURRENCY),
    };
    const platform = new TasklanePlatform(db, `http://127.0.0.1:${port}/graphql`, adminToken, env, opts.profile);
    // The gateway applies the migrations; the others start once it answers.
    platform.startApp("gateway");
    await waitUntil(
      "the gateway's /healthz",
      async () => {
        platform.assertRunning("gateway");
        const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        return res?.ok ? true : undefined;
      },
      60_000,
      100,
    );
    platform.startApp("scheduler");
    // npm start runs it too: its event relay follows every task event (publishing those of tenants with live subscribers).
    platform.startApp("notifier");
    if (opts.worker) platform.startApp("worker");
    log("platform", `gateway, scheduler, notifier${opts.worker ? ", worker" : ""} up on ${db.name}`);
    return platform;
  }

  /** Starts the PUSH worker fleet (one process) if it is not running. */
  startWorker(): void {
    if (!this.apps.has("worker")) this.startApp("worker");
  }

  /** A tenant with limits lifted out of the way of the measurements. */
  async createTenant(name: string): Promise<Tenant> {
    const operator = new TasklaneClient({ url: this.gatewayUrl, apiKey: this.adminToken });
    const created = await operator.operator.createTenant({
      name,
      limits: { apiRatePerSecond: 1_000_000, apiBurst: 1_000_000, maxPendingTasks: null, dailyTaskQuota: null },
    });
    return {
      tenantId: created.tenant.id,
      apiKey: created.apiKey,
      client: new TasklaneClient({ url: this.gatewayUrl, apiKey: created.apiKey, timeoutMs: 120_000 }),
    };
  }

  processes(): WatchedProcess[] {
    return [...this.apps.values()].map((p) => ({ label: p.label, pid: p.pid }));
  }

  /** Throws (GiveUp) with the app's output when it has died. */
  assertRunning(name: AppName): void {
    const app = this.apps.get(name);
    if (app && app.child.exitCode !== null) throw new GiveUp(`Tasklane ${name} exited (${app.child.exitCode}):\n${app.output().slice(-4000)}`);
  }

  assertAllRunning(): void {
    for (const name of this.apps.keys()) this.assertRunning(name);
  }

  /** Output of every app (for diagnosing a failed run). */
  outputs(): string {
    return [...this.apps.values()].map((p) => `--- ${p.label}\n${p.output().slice(-3000)}`).join("\n");
  }

  async stop(): Promise<void> {
    await Promise.all([...this.apps.values()].map((p) => p.stop()));
    this.apps.clear();
    await this.db.drop();
  }

  /** As `npm start -w apps/<name>` runs it: its start script's node flags and script. */
  private startApp(name: AppName): void {
    const dir = path.join(repoRoot, "apps", name);
    const { flags, script } = appStartCommand(dir);
    this.apps.set(name, spawnNode(`tasklane-${name}`, path.join(dir, script), [], { env: this.env, nodeFlags: flags, cpuProfile: this.profile.includes(name) }));
  }
}

/** A platform and one tenant for `fn`, stopped (database dropped) after it. */
export async function withPlatform<T>(opts: PlatformOptions, fn: (platform: TasklanePlatform, tenant: Tenant) => Promise<T>): Promise<T> {
  const platform = await TasklanePlatform.start(opts);
  try {
    return await fn(platform, await platform.createTenant("bench"));
  } catch (error: unknown) {
    log("platform", `failed; last output of the apps:\n${platform.outputs()}`);
    throw error;
  } finally {
    await platform.stop();
  }
}
