/**
 * `tasklane submit` where a production script meets its edges: Ctrl-C in the
 * middle of a run, a file too big to hold, a --skip past the end, a gateway
 * that is down. run.test.ts has the ordinary runs.
 */
import type { FetchLike } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { ExitCode } from "../errors.js";
import { runCli } from "../run.js";
import { recordingIo, type RecordingIo } from "../test-support/recording-io.js";
import { MAX_FILE_BYTES } from "./submit.js";

const lines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ payload: { i } })).join("\n");
const SUBMIT = ["--api-key", "tlk_k", "submit", "--queue", "q", "--type", "t", "--file", "f.ndjson", "--batch-size", "10"];

const accepted = (init: RequestInit) => {
  const inputs = (JSON.parse(String(init.body)) as { variables: { inputs: unknown[] } }).variables.inputs;
  return new Response(JSON.stringify({ data: { submitTasks: inputs.map((_, i) => ({ id: `task_${i}` })) } }), { headers: { "content-type": "application/json" } });
};

/** A gateway accepting every batch; `during(call, io, init)` runs as the call-th request comes in and may answer it instead. */
function gateway(io: () => RecordingIo, during: (call: number, io: RecordingIo, init: RequestInit) => Promise<Response> | undefined) {
  let calls = 0;
  const fetch: FetchLike = async (_url, init) => (await during(++calls, io(), init)) ?? accepted(init);
  return { fetch, calls: () => calls };
}

async function submit(argv: string[], text: string, during: Parameters<typeof gateway>[1] = () => undefined) {
  const io = recordingIo({ files: { "f.ndjson": text } });
  const api = gateway(() => io, during);
  const code = await runCli(argv, io, { fetch: api.fetch });
  return { code, stdout: io.stdout, stderr: io.stderr, calls: api.calls() };
}

describe("tasklane submit, Ctrl-C", () => {
  it("stops after the batch in flight, says how many were accepted and the --skip that resumes; exit 130", async () => {
    // Ctrl-C while the second batch (lines 11–20) is on its way: it is accepted, the third is never sent.
    const run = await submit([...SUBMIT, "--skip", "5"], `${lines(5)}\n\n${lines(35)}`, (call, io) => void (call === 2 && io.interrupt()));
    expect(run.code).toBe(ExitCode.INTERRUPTED);
    expect(run.calls).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Interrupted: stopping after the batch in flight (Ctrl-C again to stop at once).\n");
    expect(run.stderr).toContain("Interrupted.\nSubmit stopped: 20 of 35 tasks accepted (through line 26 of f.ndjson), after skipping 5.\n");
    expect(run.stderr).toContain("Resume with --skip 25.");
  });

  it("a second Ctrl-C gives up the batch in flight: both --skip values, exit 130; --json says it in one object on stderr", async () => {
    const hangUntilAborted = (init: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        if (init.signal?.aborted === true) reject(new Error("aborted"));
        init.signal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true });
      });
    const run = await submit([...SUBMIT, "--json"], lines(30), (call, io, init) => {
      if (call !== 2) return undefined;
      io.interrupt();
      io.interrupt();
      return hangUntilAborted(init);
    });
    expect(run.code).toBe(ExitCode.INTERRUPTED);
    expect(run.stdout).toBe("");
    const report = JSON.parse(run.stderr.trimEnd().split("\n").at(-1)!) as { error: Record<string, unknown> };
    expect(report.error).toMatchObject({ code: "ABORTED", submitted: 10, outcomeUnknown: true, resume: { skip: 10, skipIfBatchAccepted: 20 } });
  });

  it("a Ctrl-C while a refused batch waits out its Retry-After stops at once, the batch not written", async () => {
    const overloaded = () =>
      new Response(JSON.stringify({ errors: [{ message: "busy", extensions: { code: "OVERLOADED", retryAfterSeconds: 60 } }] }), { status: 503, headers: { "content-type": "application/json" } });
    let io: RecordingIo | undefined;
    const started = Date.now();
    const pending = submit(SUBMIT, lines(20), (call, recording) => {
      io = recording;
      // The first batch is accepted; the second is refused and would be sent again in 60 s.
      return call === 1 ? undefined : Promise.resolve(overloaded());
    });
    // The SDK's own retries of the refusal give up at once (60 s > its 30 s), then the CLI waits: interrupt it.
    await expect.poll(() => io?.stderr ?? "", { timeout: 5_000 }).toContain("sending it again in 1 min 00 s");
    io!.interrupt();
    const run = await pending;
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.code).toBe(ExitCode.INTERRUPTED);
    expect(run.stderr).toContain("Nothing of the batch of lines 11–20 was written. Resume with --skip 10.");
  });
});

describe("tasklane submit, bounds", () => {
  it("refuses standard input over MAX_FILE_BYTES before sending anything, saying to split it (exit 2)", async () => {
    const io = recordingIo({ files: { "-": "x".repeat(MAX_FILE_BYTES + 1) } });
    let calls = 0;
    const code = await runCli(["--api-key", "tlk_k", "submit", "--queue", "q", "--file", "-"], io, { fetch: async (_u, init) => (calls++, accepted(init)) });
    expect(code).toBe(ExitCode.USAGE);
    expect(calls).toBe(0);
    expect(io.stderr).toContain("error: stdin is more than 256 MiB: submit reads and checks a whole file before sending it, up to 256 MiB. Split it (e.g. split -l 1000000");
  });

  it("a --skip past the last task is a usage error (not that run's file); --skip of exactly all of them submits nothing, exit 0", async () => {
    const past = await submit([...SUBMIT, "--skip", "4"], `${lines(2)}\n\n${lines(1)}\n`);
    expect(past.code).toBe(ExitCode.USAGE);
    expect(past.stderr).toContain("error: --skip 4 is past the end: f.ndjson holds 3 tasks");
    expect(past.calls).toBe(0);

    const all = await submit([...SUBMIT, "--skip", "3"], `${lines(2)}\n\n${lines(1)}\n`);
    expect(all.code).toBe(ExitCode.OK);
    expect(all.stdout).toBe("Nothing to submit: all 3 tasks of f.ndjson skipped.\n");
  });
});

describe("tasklane submit, gateway down", () => {
  it("a refused connection stops the run with exit 1 and one --skip: the batch was never sent", async () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:4000"), { code: "ECONNREFUSED" });
    const run = await submit(SUBMIT, lines(20), (call) => (call === 1 ? undefined : Promise.reject(new TypeError("fetch failed", { cause: refused }))));
    expect(run.code).toBe(ExitCode.FAILED);
    expect(run.stderr).toMatch(/^error: NETWORK_ERROR: submitTasks: request to http:\/\/127\.0\.0\.1:4000\/graphql failed: fetch failed: connect ECONNREFUSED/m);
    expect(run.stderr).toContain("Nothing of the batch of lines 11–20 was written. Resume with --skip 10.");
    expect(run.stderr).not.toContain("it may have been accepted");
  });
});
