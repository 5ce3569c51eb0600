/**
 * `tasklane tasks tail` as users run it: the built executable
 * (packages/cli/dist/main.js) in a process of its own, against a real gateway
 * in this process and the notifier process (the event relay behind
 * taskUpdated). Tasks are PULL tasks changed through the API (submitted,
 * cancelled), so no scheduler or worker runs. What it printed is checked
 * against the tenant's task_events rows in Postgres.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { TasklaneClient } from "@tasklane/sdk";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, waitFor, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, type CreatedTenant } from "../helpers/platform.js";
import { startTestNotifier } from "../helpers/test-notifier.js";

const CLI = path.join(repoRoot, "packages", "cli", "dist", "main.js");

interface EventRow {
  id: string;
  taskId: string;
  status: string;
}

interface JsonLine extends EventRow {
  at: string;
  type: string;
  queue: string;
  previousStatus: string | null;
  attempts: number;
}

describe("tasklane tasks tail", () => {
  const platform = useGateway();
  let notifier: AppProcess;
  let tenant: CreatedTenant;
  let client: TasklaneClient;
  const running = new Set<ChildProcess>();

  beforeAll(async () => {
    notifier = startTestNotifier(platform.database, platform.redis);
    tenant = await createTenant(platform.gateway);
    client = new TasklaneClient({ url: platform.gateway.url, apiKey: tenant.apiKey });
    await client.queues.upsert({ name: "tailed", mode: "PULL" });
    await client.queues.upsert({ name: "other", mode: "PULL" });
  });

  afterEach(() => {
    for (const child of running) child.kill("SIGKILL");
  });

  afterAll(async () => {
    await notifier?.stop();
  });

  /** The CLI in a process of its own: what it printed so far, its exit code (SIGKILLed after 50 s), and a signal to send it. */
  function startCli(args: string[]) {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? "", TASKLANE_URL: platform.gateway.url, TASKLANE_API_KEY: tenant.apiKey },
      stdio: ["ignore", "pipe", "pipe"],
    });
    running.add(child);
    const printed = { stdout: "", stderr: "" };
    child.stdout?.on("data", (chunk: Buffer) => (printed.stdout += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (printed.stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
    const exitCode = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code))).finally(() => {
      clearTimeout(timer);
      running.delete(child);
    });
    const lines = () => printed.stdout.split("\n").filter((l) => l !== "");
    return { printed, exitCode, lines, kill: (signal: NodeJS.Signals) => child.kill(signal) };
  }

  /** The tenant's events after `after` in queue "tailed", as Postgres has them, ascending (up to `through` when given). */
  async function eventsInPostgres(after: string, through?: string): Promise<EventRow[]> {
    const res = await platform.database.db.pool.query<EventRow>(
      `SELECT e.id::text AS id, e.task_id AS "taskId", e.to_status::text AS status
         FROM task_events e JOIN tasks t ON t.id = e.task_id JOIN queues q ON q.id = t.queue_id
        WHERE e.tenant_id = $1 AND q.name = 'tailed' AND e.id > $2::bigint AND ($3::bigint IS NULL OR e.id <= $3::bigint)
        ORDER BY e.id`,
      [tenant.tenantId, after, through ?? null],
    );
    return res.rows;
  }

  /**
   * A tail started without --after hears events from the moment the gateway listens, which no message
   * tells: probes are submitted until one is printed. Answers that probe's line.
   */
  async function untilLive(tail: ReturnType<typeof startCli>): Promise<string> {
    for (let i = 0; i < 15; i++) {
      const probe = await client.tasks.submit({ type: "probe", queue: "tailed" });
      const line = await waitFor("the probe's line", () => tail.lines().find((l) => l.includes(probe.id)), 2_000).catch(() => undefined);
      if (line !== undefined) return line;
    }
    throw new Error(`the tail never printed a probe's event; stderr: ${tail.printed.stderr}`);
  }

  it("--json --queue prints the events of that queue's tasks as they happen, one object a line, in id order; Ctrl-C ends it with exit 0", async () => {
    const tail = startCli(["tasks", "tail", "--json", "--queue", "tailed"]);
    const first = JSON.parse(await untilLive(tail)) as JsonLine;

    const queued = await client.tasks.submit({ type: "tail.now", queue: "tailed" });
    const elsewhere = await client.tasks.submit({ type: "tail.now", queue: "other" });
    const delayed = await client.tasks.submit({ type: "tail.later", queue: "tailed", delaySeconds: 3600 });
    await client.tasks.cancel(delayed.id);
    await client.tasks.cancel(queued.id);
    await client.tasks.cancel(elsewhere.id);
    await expect.poll(() => tail.lines().filter((l) => l.includes(queued.id)).length, { timeout: 10_000 }).toBe(2);
    tail.kill("SIGINT");
    expect(await tail.exitCode).toBe(0);

    const lines = tail.lines().map((l) => JSON.parse(l) as JsonLine);
    expect(Object.keys(lines[0]!)).toEqual(["id", "at", "taskId", "type", "queue", "previousStatus", "status", "attempts"]);
    expect(lines.every((l) => l.queue === "tailed")).toBe(true);
    expect(lines.some((l) => l.taskId === elsewhere.id)).toBe(false);
    // From the first line printed on, exactly the queue's events in Postgres, in id order, none twice.
    const fromFirst = lines.slice(lines.findIndex((l) => l.id === first.id));
    expect(fromFirst.map(({ id, taskId, status }) => ({ id, taskId, status }))).toEqual([first, ...(await eventsInPostgres(first.id, lines.at(-1)!.id))].map(({ id, taskId, status }) => ({ id, taskId, status })));
    const ours = lines.filter((l) => l.taskId === queued.id || l.taskId === delayed.id).map(({ taskId, type, previousStatus, status, attempts }) => ({ taskId, type, previousStatus, status, attempts }));
    expect(ours).toEqual([
      { taskId: queued.id, type: "tail.now", previousStatus: null, status: "QUEUED", attempts: 0 },
      { taskId: delayed.id, type: "tail.later", previousStatus: null, status: "SCHEDULED", attempts: 0 },
      { taskId: delayed.id, type: "tail.later", previousStatus: "SCHEDULED", status: "CANCELLED", attempts: 0 },
      { taskId: queued.id, type: "tail.now", previousStatus: "QUEUED", status: "CANCELLED", attempts: 0 },
    ]);
    expect(tail.printed.stderr).toContain(`Stopped. Resume with --after ${lines.at(-1)!.id}.`);
  });

  it("--after prints the events after that id that happened before it started, read back in id order, then live ones", async () => {
    const before = await client.tasks.submit({ type: "tail.before", queue: "tailed" });
    const cursor = (await platform.database.db.pool.query<{ id: string }>("SELECT max(id)::text AS id FROM task_events WHERE task_id = $1", [before.id])).rows[0]!.id;
    // While no tail runs: changes in the queue, and in another one.
    const missedTask = await client.tasks.submit({ type: "tail.missed", queue: "tailed" });
    await client.tasks.submit({ type: "tail.missed", queue: "other" });
    await client.tasks.cancel(missedTask.id);
    const missed = await eventsInPostgres(cursor);
    expect(missed.map((e) => [e.taskId, e.status])).toEqual([
      [missedTask.id, "QUEUED"],
      [missedTask.id, "CANCELLED"],
    ]);

    const tail = startCli(["tasks", "tail", "--queue", "tailed", "--after", cursor]);
    await expect.poll(() => tail.lines().length, { timeout: 10_000 }).toBe(2);
    const live = await client.tasks.submit({ type: "tail.live", queue: "tailed" });
    await expect.poll(() => tail.lines().some((l) => l.includes(live.id)), { timeout: 10_000 }).toBe(true);
    tail.kill("SIGINT");
    expect(await tail.exitCode).toBe(0);

    // The human form: time, event id, task, change, queue, type.
    const shown = tail.lines().map((l) => {
      const match = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}Z {2}(\d+) {2}(task_\S+) {2}(\S+) +→ (\S+) +tailed {2}(\S+)$/.exec(l);
      expect(match, l).not.toBeNull();
      return { id: match![1]!, taskId: match![2]!, status: match![4]! };
    });
    expect(shown).toEqual([...missed, ...(await eventsInPostgres(missed.at(-1)!.id))]);
    expect(shown.at(-1)).toMatchObject({ taskId: live.id, status: "QUEUED" });
    expect(tail.printed.stderr).toContain(`after event ${cursor}`);
  });

  it("a malformed --after is a usage error (exit 2, nothing on stdout); the API's refusals are exit 1 with its code", async () => {
    for (const after of ["12x", "-5", "0012"]) {
      const bad = startCli(["tasks", "tail", "--after", after]);
      expect(await bad.exitCode).toBe(2);
      expect(bad.printed.stdout).toBe("");
      expect(bad.printed.stderr).toContain(`error: option '--after <event id>' argument '${after}' is invalid. expected an event id`);
    }

    const unknown = startCli(["tasks", "tail", "--after", "9223372036854775807"]);
    expect(await unknown.exitCode).toBe(1);
    expect(unknown.printed.stdout).toBe("");
    expect(unknown.printed.stderr).toContain("error: BAD_USER_INPUT: after: no event has that id yet");

    const noQueue = startCli(["tasks", "tail", "--queue", "nope", "--json"]);
    expect(await noQueue.exitCode).toBe(1);
    expect(noQueue.printed.stdout).toBe("");
    expect(JSON.parse(noQueue.printed.stderr.trimEnd().split("\n").at(-1)!)).toMatchObject({ error: { code: "NOT_FOUND" } });
  });
});
