import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import type { KernelFacts } from "./kernel.js";
import { SETTINGS } from "./peers.js";
import { postgresVersion } from "./postgres.js";
import { repoRoot } from "./processes.js";
import { redisVersion } from "./redis.js";

export interface RunMeta {
  startedAt: string;
  finishedAt: string;
  durationSeconds: number;
  /** As a user types it, e.g. `npm run bench -- --quick`. */
  command: string;
  quick: boolean;
  runs: number;
  scenarios: number[];
  /** `--systems`, when the run measured only some systems. */
  systems?: string[];
  cores: number;
  cpuModel: string;
  /** Absent from runs saved before it was recorded. */
  kernel?: KernelFacts;
  memoryGiB: number;
  node: string;
  postgres: string;
  redis: string;
  peers: Record<string, string>;
  /** How each system was configured. */
  settings: Record<string, string>;
  tasklaneCommit: string;
  /** 1-minute load average when the run started and ended: other work on the machine skews every figure. */
  loadAverage: { start: number; end: number };
}

export function commandLine(argv: string[]): string {
  const viaNpm = process.env.npm_lifecycle_event === "bench";
  if (viaNpm) return `npm run bench${argv.length ? ` -- ${argv.join(" ")}` : ""}`;
  return `node test/bench/dist/main.js${argv.length ? ` ${argv.join(" ")}` : ""}`;
}

const require = createRequire(import.meta.url);

/** The installed version of a package (read from its package.json next to its entry point). */
function versionOf(name: string): string {
  try {
    let dir = path.dirname(require.resolve(name));
    for (let i = 0; i < 6; i++) {
      try {
        const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
        if (pkg.name === name && pkg.version) return pkg.version;
      } catch {
        // not here; go up
      }
      dir = path.dirname(dir);
    }
  } catch {
    // not installed
  }
  return "unknown";
}

/** The checkout's commit, and whether apps, packages or prisma differ from it. Read when the run starts: edits made while it runs are not what it measured. */
export function gitCommit(): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "apps", "packages", "prisma"], { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    return dirty ? `${sha} (with uncommitted changes in apps/packages)` : sha;
  } catch {
    return "unknown (not a git checkout)";
  }
}

export async function collectMeta(base: {
  argv: string[];
  quick: boolean;
  runs: number;
  scenarios: number[];
  systems?: readonly string[] | undefined;
  startedAt: Date;
  loadAtStart: number;
  commitAtStart: string;
  kernelAtStart: KernelFacts;
}): Promise<RunMeta> {
  const finished = new Date();
  return {
    startedAt: base.startedAt.toISOString(),
    finishedAt: finished.toISOString(),
    durationSeconds: Math.round((finished.getTime() - base.startedAt.getTime()) / 1000),
    command: commandLine(base.argv),
    quick: base.quick,
    runs: base.runs,
    scenarios: base.scenarios,
    ...(base.systems ? { systems: [...base.systems] } : {}),
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? "unknown",
    kernel: base.kernelAtStart,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: await postgresVersion().catch(() => "unknown"),
    redis: await redisVersion().catch(() => "unknown"),
    peers: { bullmq: versionOf("bullmq"), "graphile-worker": versionOf("graphile-worker"), "pg-boss": versionOf("pg-boss") },
    settings: SETTINGS,
    tasklaneCommit: base.commitAtStart,
    loadAverage: { start: base.loadAtStart, end: loadNow() },
  };
}

/** The 1-minute load average, two decimals. */
export const loadNow = (): number => Math.round((os.loadavg()[0] ?? 0) * 100) / 100;

/** Waits, at most `minutes`, until the 1-minute load average is below the core count (other work skews every figure). */
export async function waitForIdle(minutes: number): Promise<void> {
  const deadline = Date.now() + minutes * 60_000;
  const cores = os.cpus().length;
  while (loadNow() >= cores && Date.now() < deadline) {
    process.stderr.write(`[bench] waiting for an idle machine: load average ${loadNow()} on ${cores} cores\n`);
    await new Promise((resolve) => setTimeout(resolve, 15_000));
  }
}
