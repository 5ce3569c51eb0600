import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * An app's entry as main.ts runs it, in a child process: holdStopSignals first, then a
 * "module load" that lasts until the test says so (a line on stdin), then listenForStopSignals
 * with a logger printing JSON lines, and the shutdown. The signal is sent during the load.
 */
/** The built module, as the apps load it (Node 20 runs no TypeScript): `npm run build` first, as for the apps' process tests. */
const STOP_SIGNALS_URL = new URL("../dist/stop-signals.js", import.meta.url).href;
const SCRIPT = `
const { holdStopSignals, listenForStopSignals } = await import(${JSON.stringify(STOP_SIGNALS_URL)});
holdStopSignals();
process.stdout.write("held\\n");
process.stdin.once("data", () => setTimeout(() => {
  const line = (level) => (fields, msg) => process.stdout.write(JSON.stringify({ level, ...fields, msg }) + "\\n");
  const signals = listenForStopSignals({ info: line("info"), error: line("error") }, 5000);
  process.stdout.write("started requested=" + signals.requested + "\\n");
  signals.started((signal) => { process.stdout.write("shutdown " + signal + "\\n"); process.exit(0); });
}, 100));
`;

describe("holdStopSignals then listenForStopSignals", () => {
  it("keeps a SIGTERM that arrives while the app loads, logs it once the logger exists, and shuts down cleanly", async () => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 20_000;
    while (!out.includes("held\n") && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
    expect(out).toContain("held\n");
    child.kill("SIGTERM");
    // The "load" goes on after the signal, then the app takes over its signals.
    await new Promise((r) => setTimeout(r, 200));
    child.stdin.end("loaded\n");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const result = await exited;
    clearTimeout(timer);
    expect(result, out).toEqual({ code: 0, signal: null });
    const lines = out.trim().split("\n");
    expect(lines[0]).toBe("held");
    expect(JSON.parse(lines[1] ?? "")).toEqual({ level: "info", signal: "SIGTERM", msg: "stopping: signal received while starting; stopping once start-up is done" });
    expect(lines.slice(2)).toEqual(["started requested=true", "shutdown SIGTERM"]);
  }, 30_000);
});
