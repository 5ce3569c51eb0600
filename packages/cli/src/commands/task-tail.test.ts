/**
 * `tasklane tasks tail` against a scripted graphql-ws endpoint: the lines it
 * prints, the subscription it asks for, how SIGINT and SIGTERM end it, and
 * how a refusal or a failure half-way is reported.
 * test/integration/cli-tail.test.ts runs it against a real gateway.
 */
import { GraphQLError } from "graphql";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ExitCode } from "../errors.js";
import { runCli } from "../run.js";
import { recordingIo } from "../test-support/recording-io.js";
import { startScriptedLive, type ScriptedLive } from "../test-support/scripted-live.js";
import { taskAnswer } from "../test-support/task-answer.js";

const KEY = "tlk_tail_key_value";

function event(id: string, taskId: string, previousStatus: string | null, status: string, overrides: Record<string, unknown> = {}) {
  return {
    id,
    taskId,
    previousStatus,
    status,
    at: "2026-12-06T10:00:01.250Z",
    task: taskAnswer({ id: taskId, type: "email.send", queue: "emails", status, ...overrides }),
  };
}

const EVENTS = [event("41", "task_a", null, "QUEUED"), event("43", "task_a", "QUEUED", "RUNNING", { attempts: 1, type: "x\u001b[2Jy" }), event("44", "task_b", "SCHEDULED", "CANCELLED")];

let live: ScriptedLive | undefined;
afterEach(async () => {
  await live?.close();
  live = undefined;
});

/** Starts `tasks tail` with `args` against `live`; `lines()` is what it printed so far, `code` its exit code. */
function startTail(args: string[], url: string) {
  const io = recordingIo();
  const code = runCli(["--api-key", KEY, "--url", url, "tasks", "tail", ...args], io);
  const lines = () => io.stdout.split("\n").filter((l) => l !== "");
  return { io, code, lines };
}

async function untilPrinted(tail: { lines(): string[] }, n: number): Promise<void> {
  await vi.waitFor(() => expect(tail.lines()).toHaveLength(n), { timeout: 5_000 });
}

describe("tasklane tasks tail", () => {
  it("prints a line an event, as it comes; Ctrl-C ends it with exit 0, saying the --after that resumes", async () => {
    live = await startScriptedLive(EVENTS);
    const tail = startTail(["--queue", "emails", "--after", "40"], live.url);
    await untilPrinted(tail, 3);
    tail.io.interrupt();
    expect(await tail.code).toBe(ExitCode.OK);
    expect(live.connectionParams).toEqual([{ authorization: `Bearer ${KEY}` }]);
    expect(live.variables).toEqual([{ taskId: null, queue: "emails", after: "40" }]);
    expect(tail.lines()).toEqual([
      "2026-12-06 10:00:01Z  41  task_a  -         → QUEUED     emails  email.send",
      "2026-12-06 10:00:01Z  43  task_a  QUEUED    → RUNNING    emails  x\\u001b[2Jy",
      "2026-12-06 10:00:01Z  44  task_b  SCHEDULED → CANCELLED  emails  email.send",
    ]);
    expect(tail.io.stderr).toBe('Tailing the events in queue "emails" after event 40 (Ctrl-C to stop).\nStopped. Resume with --after 44.\n');
    await vi.waitFor(() => expect(live?.openSockets()).toBe(0), { timeout: 5_000 });
  });

  it("--json prints one object a line, { id, at, taskId, type, queue, previousStatus, status, attempts }; SIGTERM ends it with exit 0", async () => {
    live = await startScriptedLive(EVENTS.slice(0, 2));
    const tail = startTail(["--task", "task_a", "--json", "--quiet"], live.url);
    await untilPrinted(tail, 2);
    tail.io.terminate();
    expect(await tail.code).toBe(ExitCode.OK);
    expect(live.variables).toEqual([{ taskId: "task_a", queue: null, after: null }]);
    expect(tail.lines().map((l) => JSON.parse(l) as unknown)).toEqual([
      { id: "41", at: "2026-12-06T10:00:01.250Z", taskId: "task_a", type: "email.send", queue: "emails", previousStatus: null, status: "QUEUED", attempts: 0 },
      { id: "43", at: "2026-12-06T10:00:01.250Z", taskId: "task_a", type: "x\u001b[2Jy", queue: "emails", previousStatus: "QUEUED", status: "RUNNING", attempts: 1 },
    ]);
    expect(Object.keys(JSON.parse(tail.lines()[0]!) as object)).toEqual(["id", "at", "taskId", "type", "queue", "previousStatus", "status", "attempts"]);
    expect(tail.io.stderr).toBe("");
  });

  it("stopped before any event, it says so, or names the --after it was given", async () => {
    live = await startScriptedLive([]);
    const bare = startTail([], live.url);
    await vi.waitFor(() => expect(bare.io.stderr).toContain("Tailing the events of every task (Ctrl-C to stop)."), { timeout: 5_000 });
    bare.io.interrupt();
    expect(await bare.code).toBe(ExitCode.OK);
    expect(bare.io.stderr.split("\n").at(-2)).toBe("Stopped.");

    const resumed = startTail(["--after", "7"], live.url);
    await vi.waitFor(() => expect(resumed.io.stderr).toContain("after event 7"), { timeout: 5_000 });
    resumed.io.interrupt();
    expect(await resumed.code).toBe(ExitCode.OK);
    expect(resumed.io.stderr.split("\n").at(-2)).toBe("Stopped. Resume with --after 7.");
  });

  it.each(["abc", "-1", "12a", "1.5", "007", "", "99999999999999999999"])("--after %j is a usage error: exit 2, nothing printed or sent", async (after) => {
    live = await startScriptedLive(EVENTS);
    const io = recordingIo();
    const code = await runCli(["--api-key", KEY, "--url", live.url, "tasks", "tail", "--after", after], io);
    expect(code).toBe(ExitCode.USAGE);
    expect(io.stdout).toBe("");
    expect(io.stderr).toContain(`error: option '--after <event id>' argument '${after}' is invalid. expected an event id`);
    expect(live.connectionParams).toEqual([]);
  });

  it("a refusal before any event (RESUME_TOO_FAR) is printed as every command prints an API error: exit 1", async () => {
    const tooFar = new GraphQLError("after: more than 200,000 events behind the newest, too far to resume a tenant's or a queue's feed", {
      extensions: { code: "BAD_USER_INPUT", reason: "RESUME_TOO_FAR" },
    });
    live = await startScriptedLive([tooFar]);
    const human = startTail(["--after", "1"], live.url);
    expect(await human.code).toBe(ExitCode.FAILED);
    expect(human.io.stdout).toBe("");
    expect(human.io.stderr).toMatch(/\nerror: BAD_USER_INPUT: after: more than 200,000 events behind the newest, .*\n$/);
    expect(human.io.stderr).not.toContain("Resume with");

    const json = startTail(["--after", "1", "--json", "--quiet"], live.url);
    expect(await json.code).toBe(ExitCode.FAILED);
    expect(JSON.parse(json.io.stderr)).toEqual({ error: { code: "BAD_USER_INPUT", message: expect.stringContaining("too far to resume") } });
  });

  it("a failure after some lines adds the --after that resumes after the last one: exit 1", async () => {
    const slow = new GraphQLError("Subscriber too slow; events were dropped", { extensions: { code: "OVERLOADED", reason: "SLOW_CONSUMER", retryAfterSeconds: 1 } });
    let human: ReturnType<typeof startTail> | undefined;
    // The refusal waits until the two lines are out: the SDK lets an error overtake events not yet taken.
    live = await startScriptedLive([...EVENTS.slice(0, 2), () => untilPrinted(human!, 2), slow]);
    human = startTail([], live.url);
    expect(await human.code).toBe(ExitCode.FAILED);
    expect(human.io.stderr).toMatch(/\nerror: OVERLOADED: Subscriber too slow; events were dropped\nResume with --after 43\.\n$/);
    await live.close();

    let json: ReturnType<typeof startTail> | undefined;
    live = await startScriptedLive([...EVENTS.slice(0, 2), () => untilPrinted(json!, 2), slow]);
    json = startTail(["--json", "--quiet"], live.url);
    expect(await json.code).toBe(ExitCode.FAILED);
    expect(JSON.parse(json.io.stderr)).toEqual({ error: { code: "OVERLOADED", message: "Subscriber too slow; events were dropped", retryAfterSeconds: 1, resume: { after: "43" } } });
  });
});
