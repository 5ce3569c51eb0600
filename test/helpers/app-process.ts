import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { appNodeArgs as nodeArgsOfApp } from "../../scripts/app-start.mjs";

// Most process tests poll for what they wait on; they import both from here.
export { waitFor } from "./wait-for.js";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

export type AppName = "gateway" | "scheduler" | "worker" | "notifier";

export interface AppProcess {
  name: AppName;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM and wait for exit (SIGKILL after the timeout). */
  stop(timeoutMs?: number): Promise<number | null>;
  kill(signal?: NodeJS.Signals): void;
  exited: Promise<number | null>;
}

/** The node arguments an app's own start script runs it with: its flags, then its script (the built bundle). */
export function appNodeArgs(name: AppName): string[] {
  return nodeArgsOfApp(path.join(repoRoot, "apps", name));
}

/**
 * Runs one app as a real child process, the way production runs it
 * (appNodeArgs). Tests use this wherever the behaviour is about processes:
 * crashes, restarts, several instances at once.
 */
export function startApp(name: AppName, env: Record<string, string>): AppProcess {
  const child = spawn(process.execPath, appNodeArgs(name), {
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const append = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    name,
    child,
    output: () => out,
    exited,
    kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    async stop(timeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
