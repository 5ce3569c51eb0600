/**
 * The built console (apps/console/.next) as a real `next start` process, via
 * its own start script, on a free loopback port, talking to the given gateway
 * the way `npm start` wires it: PORT is the gateway's port.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { repoRoot, waitFor } from "./app-process.js";
import { freePort } from "./free-port.js";

export interface ConsoleProcess {
  url: string;
  output(): string;
  /** SIGTERM (SIGKILL after 10 s); the exit code, null when it was killed by a signal. */
  stop(): Promise<number | null>;
}

export async function startConsole(apiUrl: string, env: Record<string, string> = {}): Promise<ConsoleProcess> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [path.join(repoRoot, "apps/console/scripts/start.mjs")], {
    cwd: path.join(repoRoot, "apps/console"),
    env: {
      ...process.env,
      NODE_ENV: "production",
      CONSOLE_PORT: String(port),
      CONSOLE_HOST: "127.0.0.1",
      NEXTAUTH_URL: url,
      NEXTAUTH_SECRET: randomBytes(32).toString("base64url"),
      PORT: new URL(apiUrl).port,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const append = (chunk: Buffer) => {
    out = (out + chunk.toString()).slice(-200_000);
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await waitFor(
    "the console to answer",
    async () => {
      if (child.exitCode !== null) throw new Error(`console exited early:\n${out}`);
      const res = await fetch(`${url}/signin`);
      return res.status === 200;
    },
    90_000,
    250,
  );
  return {
    url,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}
