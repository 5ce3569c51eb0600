/**
 * The platform the security suite attacks: a fresh database and Redis prefix,
 * the gateway as a real process (NODE_ENV=production, LOG_LEVEL=debug, so
 * every log line a deployment could emit is captured), and whichever of the
 * scheduler, worker and notifier a file needs, each with its /metrics port.
 *
 * Secrets hygiene: beforeAll plants canaries (the tenant's API key and
 * signing secret, a webhook secret, a payload field). Every answer the tests
 * receive goes through call()/post() and is kept; leaks() then searches every
 * process's whole output, every /metrics page and every error message for the
 * canaries. Each file ends with that check, after all its attacks ran.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import type { AppName, AppProcess } from "../helpers/app-process.js";
import { startGatewayProcess, startServingApp } from "../helpers/ready-apps.js";
import { createTestDatabase, createTestRedis, gql, type GqlError, type GqlResponse, type TestDatabase, type TestRedis } from "../helpers/platform.js";

export interface Canaries {
  apiKey: string;
  signingSecret: string;
  webhookSecret: string;
  payloadValue: string;
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
  json: { data?: unknown; errors?: GqlError[] } | undefined;
}

export interface AttackPlatformOptions {
  /** Extra gateway environment (ALLOW_PRIVATE_TARGETS, INTROSPECTION, …). */
  gatewayEnv?: Record<string, string>;
  /** Background apps started with the gateway, with their extra environment. */
  apps?: Partial<Record<Exclude<AppName, "gateway">, Record<string, string>>>;
  /** Where the canary webhook points (a receiver for files that deliver; unreachable otherwise). */
  canaryWebhookUrl?: () => string;
}

export interface AttackPlatform {
  readonly database: TestDatabase;
  readonly redis: TestRedis;
  readonly url: string;
  readonly adminToken: string;
  readonly canaries: Canaries;
  readonly tenantId: string;
  /** The environment every app of this platform shares (database, Redis, log level). */
  readonly baseEnv: Record<string, string>;
  /** One GraphQL operation; the answer is kept for the canary search. */
  call<T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, token?: string, url?: string): Promise<GqlResponse<T>>;
  /** Any body (object, raw string or bytes) to /graphql; the answer is kept for the canary search. */
  post(body: unknown, token?: string, url?: string): Promise<RawAnswer>;
  /** Starts one more background app on this platform (stopped with it); resolves once its /metrics answers. */
  start(name: Exclude<AppName, "gateway">, env?: Record<string, string>): Promise<AppProcess>;
  /** Starts another gateway process on this platform (stopped with it). */
  startGateway(env?: Record<string, string>): Promise<{ app: AppProcess; url: string }>;
  /** Everything the apps of that name printed so far. */
  output(name: AppName): string;
  /** Rows per table, and a digest of every table's content except columns the platform touches on reads. */
  snapshot(): Promise<Record<string, string>>;
  /** Where a canary was found: "<canary> in <place>". Empty when clean. */
  leaks(): Promise<string[]>;
}

const sharedLogLevel = "debug";

function metricsUrl(app: AppProcess, gatewayUrl: string | undefined, port: number | undefined): string | undefined {
  if (app.name === "gateway") return gatewayUrl?.replace(/\/graphql$/, "/metrics");
  return port === undefined ? undefined : `http://127.0.0.1:${port}/metrics`;
}

export function useAttackPlatform(opts: AttackPlatformOptions = {}): AttackPlatform {
  const adminToken = `admin-${randomBytes(24).toString("base64url")}`;
  const apps: Array<{ app: AppProcess; metrics: string | undefined }> = [];
  const answers: string[] = [];
  const state: { database?: TestDatabase; redis?: TestRedis; url?: string; canaries?: Canaries; tenantId?: string; baseEnv?: Record<string, string> } = {};
  const need = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not ready`);
    return value;
  };

  const keepErrors = (errors: unknown) => {
    if (errors !== undefined) answers.push(JSON.stringify(errors));
  };

  const platform: AttackPlatform = {
    get database() {
      return need(state.database, "database");
    },
    get redis() {
      return need(state.redis, "redis");
    },
    get url() {
      return need(state.url, "gateway");
    },
    get canaries() {
      return need(state.canaries, "canaries");
    },
    get tenantId() {
      return need(state.tenantId, "tenant");
    },
    get baseEnv() {
      return need(state.baseEnv, "environment");
    },
    adminToken,
    async call(query, variables = {}, token, url) {
      const res = await gql(url ?? platform.url, query, variables, token);
      keepErrors(res.errors);
      return res as GqlResponse<never>;
    },
    async post(body, token, url) {
      const payload = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      const res = await fetch(url ?? platform.url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        body: payload,
      });
      const text = await res.text();
      let json: RawAnswer["json"];
      try {
        json = JSON.parse(text) as RawAnswer["json"];
      } catch {
        json = undefined;
      }
      answers.push(text);
      return { status: res.status, headers: res.headers, text, json };
    },
    async startGateway(env = {}) {
      const started = await startGatewayProcess({ ...platform.baseEnv, ...opts.gatewayEnv, ...env });
      apps.push({ app: started.app, metrics: metricsUrl(started.app, started.url, undefined) });
      return started;
    },
    async start(name, env = {}) {
      const { app, port } = await startServingApp(name, { ...platform.baseEnv, ...env });
      apps.push({ app, metrics: metricsUrl(app, undefined, port) });
      return app;
    },
    output(name) {
      return apps.filter(({ app }) => app.name === name).map(({ app }) => app.output()).join("\n");
    },
    async snapshot() {
      const pool = platform.database.db.pool;
      const tables = await pool.query<{ table_name: string }>(
        `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations' ORDER BY 1`,
      );
      const out: Record<string, string> = {};
      for (const { table_name: table } of tables.rows) {
        // api_keys.last_used_at moves on reads; per-session counter rows are folded in the background (their sum is what counts).
        const sql =
          table === "tenant_counters"
            ? `SELECT coalesce(sum(pending), 0)::text AS digest FROM tenant_counters`
            : table === "api_keys"
              ? `SELECT count(*) || ':' || md5(coalesce(string_agg(id || coalesce(revoked_at::text, ''), ',' ORDER BY id), '')) AS digest FROM api_keys`
              : `SELECT count(*) || ':' || md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) AS digest FROM "${table}" t`;
        out[table] = (await pool.query<{ digest: string }>(sql)).rows[0]?.digest ?? "";
      }
      return out;
    },
    async leaks() {
      // Log lines arrive through pipes after the answers they belong to: wait until every app's output stops growing.
      const deadline = Date.now() + 5_000;
      for (let last = -1; Date.now() < deadline; ) {
        const size = apps.reduce((n, { app }) => n + app.output().length, 0);
        if (size === last) break;
        last = size;
        await new Promise((r) => setTimeout(r, 300));
      }
      const canaries = platform.canaries;
      const secretPart = canaries.apiKey.split("_").slice(2).join("_");
      const needles: Record<string, string> = {
        apiKey: canaries.apiKey,
        "apiKey secret part": secretPart,
        signingSecret: canaries.signingSecret,
        "signingSecret key": canaries.signingSecret.replace(/^whsec_/, ""),
        webhookSecret: canaries.webhookSecret,
        "webhookSecret key": canaries.webhookSecret.replace(/^whsec_/, ""),
        payloadValue: canaries.payloadValue,
      };
      const places: Record<string, string> = { "error messages": answers.join("\n") };
      for (const { app, metrics } of apps) {
        places[`${app.name} output`] = app.output();
        if (metrics !== undefined) places[`${app.name} /metrics`] = await fetch(metrics).then((r) => r.text(), (e: unknown) => `unreachable: ${String(e)}`);
      }
      // A search of nothing finds nothing: make sure the logs and metrics were really captured.
      const empty = Object.entries(places).filter(([place, text]) => place !== "error messages" && (place.endsWith("/metrics") ? !text.includes("# TYPE") : text.length === 0));
      if (empty.length > 0 || !places["gateway output"]?.includes("request served")) throw new Error(`nothing captured from ${empty.map(([p]) => p).join(", ") || "gateway debug log"}`);
      const found: string[] = [];
      for (const [name, needle] of Object.entries(needles)) {
        for (const [place, text] of Object.entries(places)) if (text.includes(needle)) found.push(`${name} in ${place}`);
      }
      return found;
    },
  };

  beforeAll(async () => {
    state.database = await createTestDatabase("sec");
    state.redis = createTestRedis();
    state.baseEnv = {
      DATABASE_URL: state.database.url,
      REDIS_URL: state.redis.url,
      REDIS_KEY_PREFIX: state.redis.prefix,
      LOG_LEVEL: sharedLogLevel,
      NODE_ENV: "production",
      ADMIN_TOKEN: adminToken,
      WEBHOOK_RETRY_SCHEDULE: "0.2,0.2",
    };
    const gateway = await startGatewayProcess({ ...state.baseEnv, ...opts.gatewayEnv });
    state.url = gateway.url;
    apps.push({ app: gateway.app, metrics: metricsUrl(gateway.app, gateway.url, undefined) });
    await Promise.all(Object.entries(opts.apps ?? {}).map(([name, env]) => platform.start(name as Exclude<AppName, "gateway">, env)));

    const created = await gql<{ createTenant: { tenant: { id: string }; apiKey: string; signingSecret: string } }>(
      gateway.url,
      `mutation ($i: CreateTenantInput!) { createTenant(input: $i) { tenant { id } apiKey signingSecret } }`,
      { i: { name: "canary", limits: { apiRatePerSecond: 10_000, apiBurst: 10_000 } } },
      adminToken,
    );
    const tenant = created.data?.createTenant;
    if (!tenant) throw new Error(`createTenant failed: ${JSON.stringify(created.errors)}`);
    const hook = await gql<{ createWebhook: { secret: string } }>(
      gateway.url,
      `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["*"] }) { secret } }`,
      { u: opts.canaryWebhookUrl?.() ?? "https://hooks.invalid/canary" },
      tenant.apiKey,
    );
    const webhookSecret = hook.data?.createWebhook.secret;
    if (webhookSecret === undefined) throw new Error(`createWebhook failed: ${JSON.stringify(hook.errors)}`);
    const payloadValue = `canary-payload-${randomBytes(12).toString("hex")}`;
    const task = await gql(gateway.url, `mutation ($p: JSON) { submitTask(input: { type: "canary", payload: $p }) { id } }`, { p: { canary: payloadValue } }, tenant.apiKey);
    if (task.errors) throw new Error(`submitTask failed: ${JSON.stringify(task.errors)}`);
    state.tenantId = tenant.tenant.id;
    state.canaries = { apiKey: tenant.apiKey, signingSecret: tenant.signingSecret, webhookSecret, payloadValue };
  }, 120_000);

  afterAll(async () => {
    await Promise.all(apps.map(({ app }) => app.stop()));
    await state.redis?.cleanup();
    await state.database?.drop();
  }, 60_000);

  return platform;
}

/** Every contract error code: an attack must end in one of these, never a crash or a hang. */
export const CONTRACT_CODES = ["UNAUTHENTICATED", "FORBIDDEN", "NOT_FOUND", "BAD_USER_INPUT", "CONFLICT", "RATE_LIMITED", "QUOTA_EXCEEDED", "OVERLOADED", "INTERNAL_SERVER_ERROR"];
