/**
 * The platform's processes as production runs them (each app's start script,
 * and the SDK pull worker fixture), each with a stable executor id so kills
 * can be matched to the attempts they interrupted.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository root, found by walking up (this file runs from src under vitest and from dist under node). */
export const repoRoot = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    if (existsSync(path.join(dir, "turbo.json"))) return dir;
    dir = path.dirname(dir);
  }
  throw new Error("repository root not found");
})();

export type AppName = "gateway" | "scheduler" | "worker" | "notifier" | "pull-worker";

export interface AppProcess {
  name: AppName;
  /** The executor id (WORKER_ID) for workers, else name-pid. */
  id: string;
  child: ChildProcess;
  output(): string;
  /** Lines printed on stdout, for the pull worker's JSON events. */
  onLine(fn: (line: string) => void): void;
  alive(): boolean;
  exited: Promise<number | null>;
  startedAt: number;
  exitedAt?: number;
  signal(sig: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL after the timeout. */
  stop(timeoutMs?: number): Promise<void>;
}

// By its path from the root: this file runs from src under vitest and from dist under node.
const { appNodeArgs } = (await import(pathToFileURL(path.join(repoRoot, "scripts", "app-start.mjs")).href)) as typeof import("../../../../scripts/app-start.mjs");

/** The node arguments an app's own start script runs it with (the pull worker: its fixture). */
const nodeArgsOf = (name: AppName): string[] =>
  name === "pull-worker" ? [path.join(repoRoot, "test", "chaos", "pull-worker.mjs")] : appNodeArgs(path.join(repoRoot, "apps", name));

export function spawnApp(name: AppName, id: string, env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, nodeArgsOf(name), {
    env: { ...process.env, LOG_LEVEL: "warn", ...env, ...(name === "worker" || name === "pull-worker" ? { WORKER_ID: id } : {}) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const lineListeners: ((line: string) => void)[] = [];
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = chunk.toString();
    if (lineListeners.length > 0) {
      partial += text;
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const l of lines) for (const fn of lineListeners) fn(l);
    } else if (out.length < 200_000) out += text;
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    if (out.length < 200_000) out += chunk.toString();
  });
  const alive = () => child.exitCode === null && child.signalCode === null;
  const app: AppProcess = {
    name,
    id,
    child,
    output: () => out,
    onLine: (fn) => lineListeners.push(fn),
    alive,
    exited: new Promise<number | null>((resolve) =>
      child.on("exit", (code) => {
        app.exitedAt = Date.now();
        resolve(code);
      }),
    ),
    startedAt: Date.now(),
    signal(sig) {
      if (alive()) child.kill(sig);
    },
    async stop(timeoutMs = 15_000) {
      if (!alive()) return;
      child.kill("SIGCONT");
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      await app.exited;
      clearTimeout(timer);
    },
  };
  return app;
}
