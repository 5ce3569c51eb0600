/**
 * infra/ against a live platform: gateway, two schedulers (one with
 * METRICS_TENANT_LABELS=1), worker and notifier as production runs them
 * (child processes on dist/bundle/main.js, scraped on their ports). Every series
 * selector the dashboard, the alert rules and the KEDA trigger use must match
 * live samples, with the labels they filter and group by; names, help and
 * labels follow Prometheus's conventions; the autoscaling query is a number
 * on every scheduler and moves with the PUSH backlog.
 * (infra-manifests.test.ts checks the same files statically against the sources.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor, type AppProcess } from "../helpers/app-process.js";
import { startReceiver, type HttpReceiver } from "../helpers/http-receiver.js";
import { loadYaml, read } from "../helpers/infra-facts.js";
import { createTestRedis, gql, randomSuffix, type TestRedis } from "../helpers/platform.js";
import { createTenantVia, printAppLogsOnFailure, startGatewayProcess, startServingApp, type GatewayProcess } from "../helpers/ready-apps.js";
import { createTestDatabase, type TestDatabase } from "../helpers/test-database.js";

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Scrape {
  samples: Sample[];
  help: Map<string, string>;
  type: Map<string, string>;
}

function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  for (const line of text.split("\n")) {
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      (meta[1] === "HELP" ? help : type).set(meta[2] as string, meta[3] as string);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    samples.push({ name: m[1] as string, labels, value: Number(m[3]) });
  }
  return { samples, help, type };
}

interface Matcher {
  label: string;
  op: "=" | "!=" | "=~" | "!~";
  value: string;
}

interface Selector {
  text: string;
  name: string;
  matchers: Matcher[];
}

/** The series selectors of a PromQL expression (our metric names, with their label matchers). */
function selectorsIn(expr: string): Selector[] {
  return [...expr.matchAll(/\b((?:tasklane|process|nodejs)_[a-zA-Z0-9_]+)\s*(?:\{([^}]*)\})?/g)].map((m) => ({
    text: m[0],
    name: m[1] as string,
    matchers: [...(m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)].map((l) => ({
      label: l[1] as string,
      op: l[2] as Matcher["op"],
      value: l[3] as string,
    })),
  }));
}

/** Labels an expression groups by (`by (a, b)`), less Prometheus's own target label `instance`. */
const groupingLabelsIn = (expr: string) =>
  [...expr.matchAll(/\bby\s*\(([^)]*)\)/g)].flatMap((m) => (m[1] as string).split(",").map((l) => l.trim())).filter((l) => l !== "" && l !== "instance");

function matches(sample: Sample, selector: Selector): boolean {
  if (sample.name !== selector.name) return false;
  return selector.matchers.every(({ label, op, value }) => {
    const actual = sample.labels[label] ?? "";
    const anchored = new RegExp(`^(?:${value})$`);
    if (op === "=") return actual === value;
    if (op === "!=") return actual !== value;
    if (op === "=~") return anchored.test(actual);
    return !anchored.test(actual);
  });
}

const dashboardExprs = (): Array<{ where: string; expr: string }> => {
  const dashboard = JSON.parse(read("infra/grafana/tasklane-dashboard.json")) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: `dashboard: ${p.title}`, expr: t.expr.replaceAll("$__rate_interval", "5m") })));
};

const alertExprs = (): Array<{ where: string; expr: string }> => {
  const [rules] = loadYaml("infra/prometheus/alerts.yml") as Array<{ groups: Array<{ rules: Array<{ alert: string; expr: string }> }> }>;
  return (rules?.groups ?? []).flatMap((g) => g.rules.map((r) => ({ where: `alert: ${r.alert}`, expr: r.expr })));
};

/** The worker ScaledObject's Prometheus query. */
const kedaQuery = (): string => {
  const docs = loadYaml("infra/k8s/worker.yaml") as Array<{ kind?: string; spec?: { triggers?: Array<{ metadata: { query: string } }> } }>;
  const query = docs.find((d) => d.kind === "ScaledObject")?.spec?.triggers?.[0]?.metadata.query;
  if (!query) throw new Error("infra/k8s/worker.yaml: no ScaledObject query");
  return query;
};

/**
 * The KEDA query's value as Prometheus computes it on one scheduler's
 * scrape: `max(sum by (instance) (<selector>))` is, per instance, the sum of
 * the matching samples; undefined when nothing matches (an empty result,
 * which KEDA with ignoreNullValues "false" treats as an error).
 */
function kedaValueOn(scrape: Scrape): number | undefined {
  const query = kedaQuery();
  expect(query).toMatch(/^max\(sum by \(instance\) \(tasklane_queue_depth\{[^}]*\}\)\)$/);
  const [selector] = selectorsIn(query);
  const matching = scrape.samples.filter((s) => matches(s, selector as Selector));
  return matching.length === 0 ? undefined : matching.reduce((sum, s) => sum + s.value, 0);
}

const WORKER_CONCURRENCY = 3;
const HELD_TASKS = 12;

let tdb: TestDatabase;
let testRedis: TestRedis;
let receiver: HttpReceiver;
let gateway: GatewayProcess;
const ops = new Map<string, number>();
const apps: AppProcess[] = [];
const adminToken = `admin-${randomSuffix(16)}`;
/** Answers of the endpoint that the test holds back, released at the end. */
const held: Array<() => void> = [];
let holding = true;

const scrape = async (port: number) => parseExposition(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
const scrapeAll = async () => Promise.all([...ops.entries()].map(async ([app, port]) => ({ app, scrape: await scrape(port) })));

beforeAll(async () => {
  tdb = await createTestDatabase("metricslive");
  testRedis = createTestRedis();
  receiver = await startReceiver((_req, res) => {
    const answer = () => res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    if (holding) held.push(answer);
    else answer();
  });
  const env = { DATABASE_URL: tdb.url, REDIS_URL: testRedis.url, REDIS_KEY_PREFIX: testRedis.prefix, ALLOW_PRIVATE_TARGETS: "1", LOG_LEVEL: "warn" };
  gateway = await startGatewayProcess(env, adminToken);
  apps.push(gateway.app);
  ops.set("gateway", Number(new URL(gateway.url).port));
  const started = await Promise.all([
    startServingApp("scheduler", env),
    startServingApp("scheduler", { ...env, METRICS_TENANT_LABELS: "1" }),
    startServingApp("worker", { ...env, WORKER_CONCURRENCY: String(WORKER_CONCURRENCY) }),
    startServingApp("notifier", env),
  ]);
  const names = ["scheduler", "scheduler-tenant-labels", "worker", "notifier"];
  started.forEach(({ app, port }, i) => {
    apps.push(app);
    ops.set(names[i] as string, port);
  });
}, 180_000);

afterAll(async () => {
  holding = false;
  for (const answer of held.splice(0)) answer();
  await Promise.all(apps.map((a) => a.stop(45_000)));
  await receiver?.close();
  await testRedis?.cleanup();
  await tdb?.drop();
}, 120_000);

describe("a live platform's /metrics", () => {
  printAppLogsOnFailure(apps);

  it("serves every series the dashboard, the alert rules and the KEDA trigger select, with the labels they filter and group by", async () => {
    // Serve some GraphQL so the gateway's per-operation counter has series (it has none before).
    const tenant = await createTenantVia(gateway.url, adminToken, "metrics");
    expect((await gql(gateway.url, "{ queues { name } }", {}, tenant.apiKey)).errors).toBeUndefined();
    // Every scheduler computes its backlog gauges once at start and every 10 s.
    await waitFor(
      "backlog gauges computed",
      async () => (await scrapeAll()).every(({ app, scrape: s }) => !app.startsWith("scheduler") || (s.samples.find((x) => x.name === "tasklane_backlog_collected_timestamp_seconds")?.value ?? 0) > 0),
      30_000,
      200,
    );
    const live = await scrapeAll();
    const samples = live.flatMap((l) => l.scrape.samples);
    const exprs = [...dashboardExprs(), ...alertExprs(), { where: "KEDA worker trigger", expr: kedaQuery() }];
    expect(exprs.length).toBeGreaterThan(30);
    const problems: string[] = [];
    for (const { where, expr } of exprs) {
      const selectors = selectorsIn(expr);
      if (selectors.length === 0) problems.push(`${where}: no metric in ${expr}`);
      const matched = selectors.map((sel) => {
        const found = samples.filter((s) => matches(s, sel));
        if (found.length === 0) problems.push(`${where}: nothing matches ${sel.text}`);
        return found;
      });
      for (const label of groupingLabelsIn(expr)) {
        if (!matched.some((found) => found.some((s) => label in s.labels))) problems.push(`${where}: no series of ${selectors.map((s) => s.text).join(", ")} has the label ${label}`);
      }
    }
    expect(problems).toEqual([]);
    // The alerts tell processes apart by the app label each one sets on its own series.
    for (const { app, scrape: s } of live) {
      const own = app.replace("-tenant-labels", "");
      expect(s.samples.filter((x) => x.labels.app !== own).map((x) => x.name), app).toEqual([]);
    }
  });

  it("names counters *_total, gauges and histograms in base units with the unit last, helps every metric and uses only bounded labels", async () => {
    const live = await scrapeAll();
    /** Labels whose values are fixed in code or by the schema, plus Node's default metrics' own. */
    const bounded = new Set(["app", "le", "outcome", "status", "mode", "kind", "reason", "table", "code", "operation", "limit", "version", "major", "minor", "patch", "space", "type"]);
    const problems: string[] = [];
    for (const { app, scrape: s } of live) {
      for (const [name, type] of s.type) {
        if (!name.startsWith("tasklane_")) continue;
        if (!s.help.get(name)) problems.push(`${app} ${name}: no help`);
        if (type === "counter" && !name.endsWith("_total")) problems.push(`${app} ${name}: a counter not ending in _total`);
        if (type !== "counter" && name.endsWith("_total")) problems.push(`${app} ${name}: a ${type} ending in _total`);
        if (/_(ms|milliseconds|minutes|hours|kb|kib|mb|mib)(_|$)/.test(name)) problems.push(`${app} ${name}: not in base units (seconds, bytes)`);
        if (type !== "counter" && /_(seconds|bytes)_/.test(name)) problems.push(`${app} ${name}: the unit is not the last part of the name`);
      }
      for (const sample of s.samples) {
        for (const label of Object.keys(sample.labels)) {
          const allowed = bounded.has(label) || (app === "scheduler-tenant-labels" && (label === "tenant" || label === "queue"));
          if (!allowed) problems.push(`${app} ${sample.name}: label ${label}`);
        }
      }
      // Nothing per task, per request or per URL: a scrape stays small however much work ran.
      expect(s.samples.length, app).toBeLessThan(400);
    }
    expect([...new Set(problems)]).toEqual([]);
  });

  it("every metric served has a row in docs/operations.md's metrics table", async () => {
    const rows = new Set([...read("docs/operations.md").matchAll(/^\| `(tasklane_[a-z0-9_]+)`(?:, `(tasklane_[a-z0-9_]+)`)? \|/gm)].flatMap((m) => [m[1], m[2]]).filter(Boolean));
    const served = new Set((await scrapeAll()).flatMap(({ scrape: s }) => [...s.type.keys()].filter((name) => name.startsWith("tasklane_"))));
    expect(served.size).toBeGreaterThan(30);
    expect([...served].filter((name) => !rows.has(name)).sort()).toEqual([]);
  });

  it("the KEDA query is a number on every scheduler, rises with PUSH work held by the endpoint and falls back once it is done", async () => {
    const schedulers = ["scheduler", "scheduler-tenant-labels"].map((name) => ops.get(name) as number);
    // Nothing due yet: 0 on each scheduler, not an empty answer (which KEDA turns into its fallback size).
    for (const port of schedulers) expect(kedaValueOn(await scrape(port)), `scheduler :${port} with no backlog`).toBe(0);

    const tenant = await createTenantVia(gateway.url, adminToken, "backlog");
    const queue = await gql(gateway.url, `mutation ($u: String!) { upsertQueue(input: {name: "held", mode: PUSH, endpointUrl: $u}) { name } }`, { u: `${receiver.url}/held` }, tenant.apiKey);
    expect(queue.errors).toBeUndefined();
    const tasks = Array.from({ length: HELD_TASKS }, (_, i) => ({ type: "held", queue: "held", payload: { i } }));
    const submitted = await gql(gateway.url, `mutation ($t: [SubmitTaskInput!]!) { submitTasks(inputs: $t) { id } }`, { t: tasks }, tenant.apiKey);
    expect(submitted.errors).toBeUndefined();
    await waitFor("the worker holds its slots", () => held.length >= WORKER_CONCURRENCY, 30_000, 50);
    for (const port of schedulers) {
      await waitFor(`scheduler :${port} reports ${HELD_TASKS} PUSH tasks due or running`, async () => kedaValueOn(await scrape(port)) === HELD_TASKS, 30_000, 250);
    }
    const worker = await scrape(ops.get("worker") as number);
    expect(worker.samples.find((s) => s.name === "tasklane_worker_in_flight")?.value).toBe(WORKER_CONCURRENCY);

    holding = false;
    for (const answer of held.splice(0)) answer();
    for (const port of schedulers) {
      await waitFor(`scheduler :${port} back at 0`, async () => kedaValueOn(await scrape(port)) === 0, 40_000, 250);
    }
  }, 120_000);
});
