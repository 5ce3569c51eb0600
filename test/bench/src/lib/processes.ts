import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { onCleanup } from "./cleanup.js";

/** The monorepo root (test/bench/dist/lib → ../../../..). */
export const repoRoot = fileURLToPath(new URL("../../../../", import.meta.url));
export const profileDir = path.join(repoRoot, "bench-results", "profiles");

export interface RunningProcess {
  readonly label: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** The last ~64 KiB the process printed (for error messages). */
  output(): string;
  readonly exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** V8 / Node flags before the script (an app's own, from its start script). */
  nodeFlags?: readonly string[];
  /** Run under `node --cpu-prof`; the profile is written on a clean exit. */
  cpuProfile?: boolean;
  /** Open an IPC channel (child_process.fork semantics). */
  ipc?: boolean;
}

/** Starts `node <script> …args` with output captured, registered for cleanup. */
export function spawnNode(label: string, script: string, args: string[], opts: SpawnOptions = {}): RunningProcess {
  const nodeArgs: string[] = [...(opts.nodeFlags ?? [])];
  if (opts.cpuProfile) {
    mkdirSync(profileDir, { recursive: true });
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${profileDir}`, `--cpu-prof-name=${label.replace(/\W+/g, "-")}-${Date.now()}.cpuprofile`);
  }
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, ...opts.env },
    stdio: opts.ipc ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  if (child.pid === undefined) throw new Error(`could not start ${label}`);
  let out = "";
  const append = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 128_000) out = out.slice(-64_000);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const graceFor = { ms: 15_000 };
  const stop = onCleanup(`process ${label}`, async () => {
    if (!alive()) return;
    child.kill("SIGTERM");
    const timer = setTimeout(() => alive() && child.kill("SIGKILL"), graceFor.ms);
    await exited;
    clearTimeout(timer);
  });
  return {
    label,
    child,
    pid: child.pid,
    output: () => out.slice(-64_000),
    exited,
    async stop(graceMs = 15_000) {
      graceFor.ms = graceMs;
      await stop();
    },
  };
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
