// `npm start`: the whole platform in one command (runs after `npm run build`).
// Applies migrations once, then runs every app as a child process exactly as
// `npm start -w apps/<name>` would (same script, same working directory), but
// without an npm and a shell per app, so signals reach the apps themselves.
// Node built-ins only: this must run straight after `npm ci && npm run build`.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { platformStopGraceMs } from "../packages/config/shutdown-deadlines.mjs";
import { appStartCommand } from "./app-start.mjs";

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), "..");
/** After SIGTERM, how long the apps get before SIGKILL: past every app's own deadline, the worker's drain grace as set. */
const STOP_GRACE_MS = platformStopGraceMs(process.env);

/** apps/<name>, run as its own start script runs it: its node flags, then its script. */
function nodeApp(name) {
  const cwd = `apps/${name}`;
  const { flags, script } = appStartCommand(path.join(root, cwd));
  return { name, cwd, args: [...flags, script] };
}

const APPS = [
  nodeApp("gateway"),
  nodeApp("scheduler"),
  nodeApp("worker"),
  nodeApp("notifier"),
  // Its start script defaults CONSOLE_PORT to 3000 and fills in next-auth's settings.
  { name: "console", cwd: "apps/console", args: ["scripts/start.mjs"] },
];

// Every child must see the same operator token, so it is generated here once
// rather than by each app. Other defaults (DATABASE_URL, REDIS_URL, PORT …)
// stay with the apps' own config so they are defined in one place.
const env = { ...process.env };
const generatedToken = !env.ADMIN_TOKEN;
if (generatedToken) env.ADMIN_TOKEN = randomBytes(32).toString("base64url");

// Under one command the background apps share one environment, so one
// METRICS_PORT would be claimed by whichever app listened first and the others
// would fail to start: here it is the first of three consecutive ports.
const OPS_APPS = ["scheduler", "worker", "notifier"];
const metricsBase = env.METRICS_PORT?.trim() ? Number(env.METRICS_PORT) : undefined;
const envFor = (name) => {
  const index = OPS_APPS.indexOf(name);
  if (metricsBase === undefined || !Number.isInteger(metricsBase) || index < 0) return env;
  return { ...env, METRICS_PORT: String(metricsBase + index) };
};

const running = new Set();
let stopping = false;
let exitCode = 0;
let killTimer;

const log = (message) => console.log(`[platform] ${message}`);

function launch(name, cwd, args, { longRunning }) {
  // detached: each child leads its own process group, so a terminal's Ctrl-C
  // reaches only this script, which then sends exactly one SIGTERM per app.
  const child = spawn(process.execPath, args, {
    cwd: path.join(root, cwd),
    env: envFor(name),
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  running.add(child);
  prefixLines(child.stdout, process.stdout, name);
  prefixLines(child.stderr, process.stderr, name);
  return new Promise((resolve) => {
    child.on("error", (err) => log(`${name} could not be started: ${err.message}`));
    child.on("exit", (code, signal) => {
      running.delete(child);
      if (stopping) {
        if (running.size === 0) finish();
      } else if (longRunning) {
        log(`${name} exited unexpectedly (${signal ?? `code ${code}`}); stopping the others`);
        stop(1);
      }
      resolve(code);
    });
  });
}

function prefixLines(from, to, name) {
  createInterface({ input: from, crlfDelay: Infinity }).on("line", (line) => to.write(`[${name}] ${line}\n`));
}

function signalChild(child, signal) {
  try {
    process.kill(-child.pid, signal); // the whole group, in case an app has children of its own
  } catch {
    // Already gone (ESRCH): its exit event is on its way.
  }
}

function stop(code) {
  if (stopping) return;
  stopping = true;
  exitCode = code;
  if (running.size === 0) return finish();
  for (const child of running) signalChild(child, "SIGTERM");
  killTimer = setTimeout(() => {
    log(`still running after ${STOP_GRACE_MS / 1000} s; sending SIGKILL`);
    for (const child of running) signalChild(child, "SIGKILL");
  }, STOP_GRACE_MS);
}

function finish() {
  clearTimeout(killTimer);
  process.exit(exitCode);
}

for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    if (!stopping) {
      log(`${signal} received; stopping all apps (up to ${STOP_GRACE_MS / 1000} s)`);
      return stop(0);
    }
    log(`${signal} received again; killing now`);
    for (const child of running) signalChild(child, "SIGKILL");
  });
}

// Last resort if this script dies on an error: never leave apps behind.
process.on("exit", () => {
  for (const child of running) signalChild(child, "SIGKILL");
});

// `npm start` runs this under `sh -c`, and when npm forwards a SIGTERM the
// shell dies without passing it on. Being re-parented means whoever started
// us is gone, so stop rather than keep the apps running as orphans.
const parentPid = process.ppid;
setInterval(() => {
  if (process.ppid !== parentPid && !stopping) {
    log("parent process exited; stopping all apps");
    stop(0);
  }
}, 1000).unref();

const migrated = await launch("migrate", ".", ["packages/db/dist/cli/migrate.js"], { longRunning: false });
if (!stopping) {
  if (migrated !== 0) {
    log(`migrations failed (code ${migrated}); nothing started`);
    process.exit(1);
  }
  if (generatedToken) {
    console.log(`\nADMIN_TOKEN=${env.ADMIN_TOKEN} (generated; set ADMIN_TOKEN to choose your own)\n`);
  }
  for (const app of APPS) launch(app.name, app.cwd, app.args, { longRunning: true });
  log(`started ${APPS.map((app) => app.name).join(", ")}`);
  if (envFor("scheduler") !== env) log(`metrics: ${OPS_APPS.map((name) => `${name} on ${envFor(name).METRICS_PORT}`).join(", ")}`);
}
