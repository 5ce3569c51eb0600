/**
 * Facts about the code that infra/ must agree with, read from the sources
 * themselves (not restated here): which metrics the apps register, which
 * environment variables they read, which HTTP paths each app serves, and
 * where a container command's script comes from.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { baseEnvSchema, gatewayEnvSchema, notifierEnvSchema, schedulerEnvSchema, workerEnvSchema } from "@tasklane/config";
import { Registry, collectDefaultMetrics } from "prom-client";
import { parseAllDocuments } from "yaml";
import { appStartCommand } from "../../scripts/app-start.mjs";
import { repoRoot } from "./app-process.js";

export { repoRoot };
export const APPS = ["gateway", "scheduler", "worker", "notifier", "console"] as const;
export type Component = (typeof APPS)[number] | "migrate";

const SKIP_DIRS = new Set(["node_modules", "dist", ".next", ".turbo", "generated"]);

/** Files under `dir` (relative to the repo) whose name ends with one of `suffixes`. */
export function listFiles(dir: string, suffixes: string[]): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP_DIRS.has(entry.name)) walk(path.join(abs, entry.name));
      } else if (suffixes.some((s) => entry.name.endsWith(s))) {
        out.push(path.relative(repoRoot, path.join(abs, entry.name)));
      }
    }
  };
  walk(path.join(repoRoot, dir));
  return out.sort();
}

export const read = (file: string) => readFileSync(path.join(repoRoot, file), "utf8");

/** Every document of a YAML file (merge keys on, as docker compose reads them); throws on any parse error. */
export function loadYaml(file: string): unknown[] {
  const docs = parseAllDocuments(read(file), { merge: true });
  const list = Array.isArray(docs) ? docs : [docs];
  for (const doc of list) {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
  }
  return list.map((doc) => doc.toJS({ maxAliasCount: 100 }) as unknown).filter((d) => d !== null && d !== undefined);
}

const appSources = () => [...listFiles("apps", [".ts", ".tsx", ".mjs"]), ...listFiles("packages", [".ts"])].filter((f) => !f.endsWith(".test.ts"));

export interface RegisteredMetrics {
  names: Set<string>;
  histograms: Set<string>;
}

/** tasklane_* names registered in app and package sources, plus prom-client's default process/nodejs metrics. */
export async function registeredMetrics(): Promise<RegisteredMetrics> {
  const names = new Set<string>();
  const histograms = new Set<string>();
  for (const file of appSources()) {
    const text = read(file);
    for (const m of text.matchAll(/"(tasklane_[a-z0-9_]+)"/g)) names.add(m[1] as string);
    for (const m of text.matchAll(/new Histogram\(\{\s*name:\s*"(tasklane_[a-z0-9_]+)"/g)) histograms.add(m[1] as string);
  }
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  for (const metric of await defaults.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === "histogram") histograms.add(metric.name);
  }
  return { names, histograms };
}

/** Metric names a PromQL expression reads (our namespaces only; label values and functions are not names). */
export function metricNamesIn(promql: string): string[] {
  const withoutStrings = promql.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...new Set([...withoutStrings.matchAll(/\b(?:tasklane|process|nodejs)_[a-zA-Z0-9_]+/g)].map((m) => m[0]))];
}

export function isRegistered(name: string, metrics: RegisteredMetrics): boolean {
  if (metrics.names.has(name)) return true;
  const base = name.replace(/_(bucket|sum|count)$/, "");
  return base !== name && metrics.histograms.has(base);
}

/** Environment variables each component reads: its packages/config schema, or `process.env.X` in its own code. */
export function envNamesByComponent(): Map<Component, Set<string>> {
  const keys = (schema: { shape: Record<string, unknown> }) => new Set(Object.keys(schema.shape));
  const direct = (dir: string) => new Set(listFiles(dir, [".ts", ".tsx", ".mjs"]).flatMap((f) => [...read(f).matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1] as string)));
  const withDirect = (set: Set<string>, dir: string) => new Set([...set, ...direct(dir)]);
  return new Map<Component, Set<string>>([
    ["gateway", withDirect(keys(gatewayEnvSchema), "apps/gateway/src")],
    ["scheduler", withDirect(keys(schedulerEnvSchema), "apps/scheduler/src")],
    ["worker", withDirect(keys(workerEnvSchema), "apps/worker/src")],
    ["notifier", withDirect(keys(notifierEnvSchema), "apps/notifier/src")],
    ["migrate", keys(baseEnvSchema)],
    ["console", direct("apps/console")],
  ]);
}

/** HTTP paths each component serves: Express routes, the shared ops server's cases, Next route handlers. */
export function servedPaths(): Map<Component, Set<string>> {
  const gateway = new Set([...read("apps/gateway/src/server.ts").matchAll(/app\.get\("(\/[^"]*)"/g)].map((m) => m[1] as string));
  const ops = new Set([...read("packages/observability/src/ops-server.ts").matchAll(/case "(\/[^"]*)":/g)].map((m) => m[1] as string));
  const consoleRoutes = new Set(
    listFiles("apps/console/app", ["route.ts"]).map((f) =>
      `/${path.dirname(path.relative("apps/console/app", f)).split(path.sep).filter((seg) => !/^\(.*\)$/.test(seg)).join("/")}`,
    ),
  );
  return new Map<Component, Set<string>>([
    ["gateway", gateway],
    ["scheduler", ops],
    ["worker", ops],
    ["notifier", ops],
    ["console", consoleRoutes],
    ["migrate", new Set()],
  ]);
}

/** The env variable that sets the port a component's probes and scrapes use. */
export const PORT_VARIABLE: Record<Component, string | undefined> = {
  gateway: "PORT",
  scheduler: "METRICS_PORT",
  worker: "METRICS_PORT",
  notifier: "METRICS_PORT",
  console: "CONSOLE_PORT",
  migrate: undefined,
};

/** The command (`node [--flag …] <script>`, from the repository root) an app's own start script runs it with. */
export function startCommandOf(app: (typeof APPS)[number]): string[] {
  const { flags, script } = appStartCommand(path.join(repoRoot, "apps", app));
  return ["node", ...flags, path.posix.join("apps", app, script)];
}

const MIGRATE_COMMAND = ["node", "packages/db/dist/cli/migrate.js"];

/**
 * The component a container command runs: an app when it is exactly the
 * app's own start script's (its node flags and script), migrate for the
 * migration CLI; undefined otherwise.
 */
export function componentOfCommand(command: readonly string[]): Component | undefined {
  const line = command.join(" ");
  if (line === MIGRATE_COMMAND.join(" ")) return existsSync(path.join(repoRoot, "packages/db/src/cli/migrate.ts")) ? "migrate" : undefined;
  return APPS.find((app) => startCommandOf(app).join(" ") === line);
}
