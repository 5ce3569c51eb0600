/**
 * The command line end to end inside the process: parsing, exit codes, what
 * goes to stdout and stderr, against a scripted GraphQL endpoint (a fetch).
 * test/integration/cli.test.ts runs the built executable against a real gateway.
 */
import type { Command } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ExitCode } from "./errors.js";
import { buildProgram } from "./program.js";
import { runCli } from "./run.js";
import { recordingIo, scriptedFetch, type RecordingIoOptions } from "./test-support/recording-io.js";
import { startScriptedLive } from "./test-support/scripted-live.js";
import { taskAnswer } from "./test-support/task-answer.js";

const KEY = "tlk_secret_key_value";
const UNAUTHENTICATED = { status: 401, body: { errors: [{ message: "Invalid API key", extensions: { code: "UNAUTHENTICATED" } }] } };

function task(overrides: Record<string, unknown> = {}) {
  return taskAnswer({ attemptHistory: [], ...overrides });
}

const queue = (overrides: Record<string, unknown> = {}) => ({
  name: "emails",
  mode: "PULL",
  endpointUrl: null,
  concurrency: null,
  rateLimit: null,
  paused: false,
  stats: { scheduled: 1, queued: 5, running: 0, retrying: 2, dead: 0, succeeded: 0, oldestQueuedAgeSeconds: 3 },
  ...overrides,
});

/** Runs one command line with the API key given; answers every request with `answer`. */
async function run(argv: string[], answer: Parameters<typeof scriptedFetch>[0] = () => UNAUTHENTICATED, io: RecordingIoOptions = {}) {
  const recording = recordingIo(io);
  const gateway = scriptedFetch(answer);
  const code = await runCli(["--api-key", KEY, ...argv], recording, { fetch: gateway.fetch });
  return { code, stdout: recording.stdout, stderr: recording.stderr, calls: gateway.calls, asked: recording.asked };
}

function commandPaths(command: Command, prefix: string[] = []): string[][] {
  return command.commands.flatMap((c) => [[...prefix, c.name()], ...commandPaths(c, [...prefix, c.name()])]);
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe("tasklane: parsing and exit codes", () => {
  it("answers --help on every command (exit 0) and never prints the API key", async () => {
    vi.stubEnv("TASKLANE_API_KEY", KEY);
    const paths = commandPaths(buildProgram({ io: recordingIo(), exitCode: 0 }));
    expect(paths.map((p) => p.join(" "))).toEqual([
      "submit",
      "tasks",
      "tasks list",
      "tasks get",
      "tasks cancel",
      "tasks watch",
      "tasks tail",
      "queues",
      "queues list",
      "queues pause",
      "queues resume",
      "queues purge",
      "dead-letters",
      "dead-letters list",
      "dead-letters redrive",
      "dead-letters discard",
    ]);
    for (const path of [[], ...paths]) {
      const io = recordingIo();
      expect(await runCli([...path, "--help"], io), path.join(" ")).toBe(ExitCode.OK);
      expect(io.stdout).toContain(`Usage: tasklane${path.length > 0 ? ` ${path.join(" ")}` : ""}`);
      expect(io.stdout + io.stderr).not.toContain(KEY);
    }
  });

  it.each([
    [["nope"], "unknown command 'nope'"],
    [["tasks", "list", "--nope"], "unknown option '--nope'"],
    [["tasks", "list", "--limit", "0"], "expected an integer from 1 to 10000"],
    [["tasks", "list", "--status", "QUEUED,WAITING"], "expected statuses from SCHEDULED, BLOCKED, QUEUED"],
    [["tasks", "get"], "missing required argument 'id'"],
    [["tasks", "watch", "task_1", "--timeout", "0.5"], "expected seconds from 1 to 604800"],
    [["submit", "--file", "x.ndjson"], "required option '--queue <name>' not specified"],
    [["dead-letters", "redrive"], "dead-letters redrive needs --all"],
    [["tasks"], "Usage: tasklane tasks"],
    [[], "Usage: tasklane"],
  ])("%j is a usage error: exit 2, nothing sent", async (argv, message) => {
    const { code, stderr, calls } = await run(argv);
    expect(code).toBe(ExitCode.USAGE);
    expect(stderr).toContain(message);
    expect(calls).toEqual([]);
  });

  it("needs an API key (--api-key or TASKLANE_API_KEY) and an http(s) --url: usage errors", async () => {
    vi.stubEnv("TASKLANE_API_KEY", "");
    const io = recordingIo();
    expect(await runCli(["queues", "list"], io)).toBe(ExitCode.USAGE);
    expect(io.stderr).toContain("error: no API key: pass --api-key or set TASKLANE_API_KEY");

    const bad = await run(["--url", "localhost:4000", "queues", "list"]);
    expect(bad.code).toBe(ExitCode.USAGE);
    expect(bad.stderr).toContain("--url: url must be an absolute http(s) URL");
  });

  it("reads the key and URL from the environment and sends the key as a bearer token", async () => {
    vi.stubEnv("TASKLANE_API_KEY", KEY);
    vi.stubEnv("TASKLANE_URL", "http://gateway.internal:4000/graphql");
    const gateway = scriptedFetch(() => ({ body: { data: { queues: [] } } }));
    const urls: string[] = [];
    const io = recordingIo();
    const code = await runCli(["queues", "list"], io, { fetch: (url, init) => (urls.push(url), gateway.fetch(url, init)) });
    expect(code).toBe(ExitCode.OK);
    expect(io.stdout).toBe("No queues.\n");
    expect(urls).toEqual(["http://gateway.internal:4000/graphql"]);
    expect(gateway.calls[0]?.authorization).toBe(`Bearer ${KEY}`);
  });

  it("an API error is exit 1 with its code and message on stderr (a JSON object with --json), the key never printed", async () => {
    const human = await run(["queues", "list"]);
    expect(human.code).toBe(ExitCode.FAILED);
    expect(human.stdout).toBe("");
    expect(human.stderr).toMatch(/^error: UNAUTHENTICATED: Invalid API key\n {2}\(request tl-/);

    const json = await run(["queues", "list", "--json"]);
    expect(json.code).toBe(ExitCode.FAILED);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: "UNAUTHENTICATED", message: "Invalid API key" } });
    expect(human.stderr + json.stderr).not.toContain(KEY);
  });

  it("tasks get of an id the tenant does not have is NOT_FOUND, exit 1", async () => {
    const { code, stderr } = await run(["tasks", "get", "task_nope"], () => ({ body: { data: { task: null } } }));
    expect(code).toBe(ExitCode.FAILED);
    expect(stderr).toContain("error: NOT_FOUND: Task task_nope not found");
  });
});

describe("tasklane submit", () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ payload: { i } })).join("\n");
  const accept = (_operation: string, variables: Record<string, unknown>) => {
    const inputs = variables.inputs as unknown[];
    return { body: { data: { submitTasks: inputs.map((_, i) => ({ id: `task_${i}` })) } } };
  };

  it("sends 1,200 lines as three submitTasks batches, a progress line each on a non-terminal stderr", async () => {
    const { code, stdout, stderr, calls } = await run(["submit", "--queue", "q", "--type", "t", "--file", "f.ndjson"], accept, { files: { "f.ndjson": lines(1_200) } });
    expect(code).toBe(ExitCode.OK);
    expect(calls.map((c) => [c.operation, (c.variables.inputs as unknown[]).length])).toEqual([
      ["SubmitTaskIds", 500],
      ["SubmitTaskIds", 500],
      ["SubmitTaskIds", 200],
    ]);
    expect(calls[0]?.variables.inputs).toContainEqual({ type: "t", queue: "q", payload: { i: 0 } });
    expect(stdout).toMatch(/^Submitted 1,200 tasks to queue "q" in 3 batches \(\d+\.\d s\)\.\n$/);
    expect(stderr.split("\n").map((l) => l.split("  ")[0])).toEqual(["500/1,200 tasks", "1,000/1,200 tasks", "1,200/1,200 tasks", ""]);
  });

  it("--json prints the ids; --quiet no progress; - reads standard input", async () => {
    const { code, stdout, stderr } = await run(["submit", "--queue", "q", "--type", "t", "--file", "-", "--json", "--quiet"], accept, { files: { "-": lines(3) } });
    expect(code).toBe(ExitCode.OK);
    expect(JSON.parse(stdout)).toEqual({ queue: "q", submitted: 3, skipped: 0, ids: ["task_0", "task_1", "task_2"] });
    expect(stderr).toBe("");
  });

  it("a bad line anywhere: every bad line reported by number, nothing sent, exit 1", async () => {
    const text = `${lines(700)}\n{"type": "t", "priority": "URGENT"}\n${lines(10)}\n[]`;
    const { code, stderr, calls } = await run(["submit", "--queue", "q", "--type", "t", "--file", "f.ndjson"], accept, { files: { "f.ndjson": text } });
    expect(code).toBe(ExitCode.FAILED);
    expect(calls).toEqual([]);
    expect(stderr).toMatch(/^error: 2 bad lines in f\.ndjson; nothing was submitted\nf\.ndjson:701: priority: .*\nf\.ndjson:712: expected a JSON object/);
  });

  it("a file that cannot be read is a usage error", async () => {
    const { code, stderr } = await run(["submit", "--queue", "q", "--file", "missing.ndjson"]);
    expect(code).toBe(ExitCode.USAGE);
    expect(stderr).toContain("cannot read --file missing.ndjson: ENOENT");
  });

  it("a batch refused for good stops the run, saying how many were accepted and the --skip that resumes", async () => {
    let n = 0;
    const quotaOnSecond = (operation: string, variables: Record<string, unknown>) =>
      ++n === 2 ? { status: 200, body: { errors: [{ message: "Daily task quota exceeded", extensions: { code: "QUOTA_EXCEEDED" } }] } } : accept(operation, variables);
    const { code, stderr, calls } = await run(["submit", "--queue", "q", "--type", "t", "--file", "f.ndjson", "--skip", "100"], quotaOnSecond, { files: { "f.ndjson": lines(1_300) } });
    expect(code).toBe(ExitCode.FAILED);
    expect(calls).toHaveLength(2);
    expect(stderr).toContain("error: QUOTA_EXCEEDED: Daily task quota exceeded");
    expect(stderr).toContain("Submit stopped: 500 of 1,200 tasks accepted (through line 600 of f.ndjson), after skipping 100.");
    expect(stderr).toContain("Nothing of the batch of lines 601–1,100 was written. Resume with --skip 600.");
  });

  it("sends a batch refused for load again after its Retry-After, --retries times, then stops", async () => {
    const overloaded = { status: 503, body: { errors: [{ message: "Service overloaded, try again later", extensions: { code: "OVERLOADED", retryAfterSeconds: 0 } }] } };
    const { code, stderr, calls } = await run(["submit", "--queue", "q", "--type", "t", "--file", "f.ndjson", "--retries", "1"], () => overloaded, { files: { "f.ndjson": lines(3) } });
    expect(code).toBe(ExitCode.FAILED);
    // The SDK's own 3 attempts, twice: the first send and the one retry.
    expect(calls).toHaveLength(6);
    expect(stderr).toContain("batch from task 1 refused (OVERLOADED); sending it again in 0.0 s (retry 1 of 1)");
    expect(stderr).toContain("Resume with --skip 0.");
  });
});

describe("tasklane tasks watch", () => {
  const event = (overrides: Record<string, unknown>) => ({ taskId: "task_1", previousStatus: null, status: overrides.status, at: "2026-12-06T10:00:01.000Z", task: task(overrides) });

  it("subscribes, reads the task once, then prints a line a change from the events; exit 0 when it SUCCEEDED", async () => {
    let read!: () => void;
    const wasRead = new Promise<void>((resolve) => (read = resolve));
    // The events go out once the read has been answered, so the lines come in one order.
    const live = await startScriptedLive(
      [event({ status: "QUEUED" }), event({ status: "RUNNING", attempts: 1 }), event({ status: "SUCCEEDED", attempts: 1, result: { sent: true } })],
      () => wasRead,
    );
    try {
      const ok = await run(["--url", live.url, "tasks", "watch", "task_1"], () => {
        read();
        return { body: { data: { task: task({ status: "QUEUED" }) } } };
      });
      expect(ok.stderr).toBe("");
      expect(ok.code).toBe(ExitCode.OK);
      expect(ok.calls.map((c) => c.operation)).toEqual(["Task"]);
      expect(live.connectionParams).toEqual([{ authorization: `Bearer ${KEY}` }]);
      expect(live.variables).toEqual([{ taskId: "task_1", queue: null, after: null }]);
      // The read's QUEUED and the event's QUEUED are one line.
      expect(ok.stdout.split("\n").map((l) => l.split("  ").slice(1).join("  "))).toEqual(["QUEUED  attempt 0 of 3", "RUNNING  attempt 1 of 3", 'SUCCEEDED  attempt 1 of 3  result {"sent":true}', ""]);
      // The watch closed its socket when it ended.
      await vi.waitFor(() => expect(live.openSockets()).toBe(0), { timeout: 5_000 });
    } finally {
      await live.close();
    }
  });

  it("a task already finished is answered by the read: one JSON line, exit 1 when it is DEAD", async () => {
    const live = await startScriptedLive([]);
    try {
      const dead = await run(["--url", live.url, "tasks", "watch", "task_1", "--json"], () => ({ body: { data: { task: task({ status: "DEAD", attempts: 3, lastError: "HTTP 500" }) } } }));
      expect(dead.code).toBe(ExitCode.FAILED);
      expect(JSON.parse(dead.stdout)).toMatchObject({ id: "task_1", status: "DEAD", attempts: 3, lastError: "HTTP 500" });
      expect(dead.stderr).toBe("");
    } finally {
      await live.close();
    }
  });

  it("gives up after --timeout with TIMEOUT (exit 1)", async () => {
    const live = await startScriptedLive([]);
    try {
      const waited = await run(["--url", live.url, "tasks", "watch", "task_1", "--timeout", "1"], () => ({ body: { data: { task: task({ status: "QUEUED" }) } } }));
      expect(waited.code).toBe(ExitCode.FAILED);
      expect(waited.stdout.split("\n").map((l) => l.split("  ").slice(1).join("  "))).toEqual(["QUEUED  attempt 0 of 3", ""]);
      expect(waited.stderr).toContain("TIMEOUT");
    } finally {
      await live.close();
    }
  });
});

describe("confirmation of purge and discard", () => {
  const answers = (operation: string) => {
    if (operation === "Queue") return { body: { data: { queue: queue() } } };
    if (operation === "PurgeQueue") return { body: { data: { purgeQueue: queue({ stats: { ...queue().stats, queued: 0, scheduled: 0, retrying: 0 } }) } } };
    if (operation === "DeadLetterTasks") return { body: { data: { deadLetterTasks: { nodes: [task({ status: "DEAD" })], pageInfo: { hasNextPage: false, endCursor: null }, totalCount: 4 } } } };
    if (operation === "DiscardDeadLetterTasks") return { body: { data: { discardDeadLetterTasks: { count: 4, hasMore: false } } } };
    throw new Error(`unexpected ${operation}`);
  };

  it("refuses without --yes when standard input is not a terminal (exit 2, nothing sent)", async () => {
    for (const argv of [["queues", "purge", "emails"], ["dead-letters", "discard", "--all"]]) {
      const { code, stderr, calls } = await run(argv, answers);
      expect(code).toBe(ExitCode.USAGE);
      expect(stderr).toMatch(/error: refusing to (purge queue "emails"|discard every dead task) without --yes: standard input is not a terminal to confirm on/);
      expect(calls).toEqual([]);
    }
    const yes = await run(["queues", "purge", "emails", "--yes"], answers);
    expect(yes.code).toBe(ExitCode.OK);
    expect(yes.calls.map((c) => c.operation)).toEqual(["PurgeQueue"]);
    expect(yes.stdout).toBe('Purged queue "emails".\n');
  });

  it("asks on a terminal, saying what would go, and does nothing unless the answer is yes", async () => {
    const no = await run(["queues", "purge", "emails"], answers, { stdinIsTTY: true, answers: [""] });
    expect(no.code).toBe(ExitCode.FAILED);
    expect(no.asked).toEqual(['Purge queue "emails": cancel its 8 tasks not running (5 queued, 1 scheduled, 2 retrying, and any blocked)? [y/N] ']);
    expect(no.calls.map((c) => c.operation)).toEqual(["Queue"]);
    expect(no.stderr).toBe("Not purged.\n");

    const yes = await run(["dead-letters", "discard", "--all"], answers, { stdinIsTTY: true, answers: ["y"] });
    expect(yes.code).toBe(ExitCode.OK);
    expect(yes.asked).toEqual(["Discard 4 dead tasks? They become CANCELLED, their history kept. [y/N] "]);
    expect(yes.calls.map((c) => c.operation)).toEqual(["DeadLetterTasks", "DeadLetterTasks", "DiscardDeadLetterTasks"]);
    expect(yes.stdout).toBe("Discarded 4 dead tasks.\n");
  });
});
