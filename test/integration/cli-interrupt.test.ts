/**
 * Ctrl-C (SIGINT) in the middle of `tasklane submit`, as a user or a CI job
 * sends it: the built executable in a process of its own, against a stub
 * endpoint that holds the second batch until the signal has been sent, so the
 * test knows exactly what was accepted. Nothing here needs the platform: the
 * point is the process's own signal handling and exit code.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot } from "../helpers/app-process.js";

const CLI = path.join(repoRoot, "packages", "cli", "dist", "main.js");

/** The built CLI in a process of its own against `url`: what it printed so far, and its exit code (SIGKILLed after 30 s). */
function startCli(args: string[], url: string) {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH ?? "", TASKLANE_URL: url, TASKLANE_API_KEY: "tlk_interrupt_test" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const printed = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (printed.stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (printed.stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const exitCode = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c))).finally(() => clearTimeout(timer));
  /** SIGINT, then waits for the CLI to say it is stopping after `inFlight`. */
  const interrupt = async (inFlight: string) => {
    child.kill("SIGINT");
    await expect.poll(() => printed.stderr, { timeout: 10_000 }).toContain(`Interrupted: stopping after the ${inFlight} in flight`);
  };
  return { printed, exitCode, interrupt };
}

describe("tasklane submit and Ctrl-C", () => {
  let dir: string;
  let server: Server;
  let url: string;
  let batches = 0;
  /** Set by the test: called when the second batch arrives, before it is answered. */
  let onSecondBatch: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "tasklane-cli-int-"));
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", async () => {
        const inputs = (JSON.parse(body) as { variables: { inputs: unknown[] } }).variables.inputs;
        if (++batches === 2) await onSecondBatch();
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ data: { submitTasks: inputs.map((_, i) => ({ id: `task_${batches}_${i}` })) } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("stops after the batch in flight, prints what was accepted and the --skip that resumes, exit 130", async () => {
    const file = path.join(dir, "tasks.ndjson");
    await writeFile(file, Array.from({ length: 50 }, (_, i) => JSON.stringify({ payload: { i } })).join("\n"));
    const cli = startCli(["submit", "--queue", "q", "--type", "t", "--file", file, "--batch-size", "10"], url);
    // The signal goes while batch 2 waits for its answer; the CLI says so before the answer is let through.
    onSecondBatch = () => cli.interrupt("batch");

    expect(await cli.exitCode).toBe(130);
    expect(batches).toBe(2);
    expect(cli.printed.stdout).toBe("");
    expect(cli.printed.stderr).toContain("Submit stopped: 20 of 50 tasks accepted (through line 20 of");
    expect(cli.printed.stderr).toContain("Resume with --skip 20.");
    expect(cli.printed.stderr).not.toContain("tlk_interrupt_test");
  });
});

describe("tasklane dead-letters redrive --all and Ctrl-C", () => {
  let server: Server;
  let url: string;
  let redriveCalls = 0;
  /** Set by the test: called when the second redrive call arrives, before it is answered. */
  let onSecondCall: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    // 50 dead tasks, redriven 10 a call (the CLI reads the count first, then calls until it is done).
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", async () => {
        const { query } = JSON.parse(body) as { query: string };
        res.setHeader("content-type", "application/json");
        if (/deadLetterTasks\(/.test(query)) {
          res.end(JSON.stringify({ data: { deadLetterTasks: { totalCount: 50, edges: [], nodes: [], pageInfo: { hasNextPage: false, endCursor: null } } } }));
          return;
        }
        if (++redriveCalls === 2) await onSecondCall();
        res.end(JSON.stringify({ data: { redriveDeadLetterTasks: { count: 10, hasMore: true } } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("stops after the call in flight, prints how many were redriven of how many, exit 130", async () => {
    const cli = startCli(["dead-letters", "redrive", "--all"], url);
    onSecondCall = () => cli.interrupt("call");

    expect(await cli.exitCode).toBe(130);
    expect(redriveCalls).toBe(2);
    expect(cli.printed.stdout).toBe("");
    expect(cli.printed.stderr).toContain("Interrupted: 20 of 50 dead tasks redriven. Run the command again to go on.");
  });
});
