/**
 * The `tasklane` command-line tool (packages/cli) as users run it: the built
 * executable (packages/cli/dist/main.js) in a process of its own, against a
 * real gateway, with what it did checked through the API and the database.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { IdPrefix, newId } from "@tasklane/core";
import { TasklaneClient } from "@tasklane/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, type AppProcess } from "../helpers/app-process.js";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, type CreatedTenant } from "../helpers/platform.js";
import { startTestNotifier } from "../helpers/test-notifier.js";

const CLI = path.join(repoRoot, "packages", "cli", "dist", "main.js");

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CliOptions {
  apiKey?: string;
  /** Written to the process's stdin (a pipe, not a terminal); without it stdin is /dev/null. */
  input?: string;
  /** Called with all of stdout so far each time more arrives. */
  onStdout?(stdout: string): void;
}

describe("tasklane CLI", () => {
  const platform = useGateway();
  const pool = () => platform.database.db.pool;
  let tenant: CreatedTenant;
  let client: TasklaneClient;
  let dir: string;
  /** The event relay behind `tasks watch`'s subscription. */
  let notifier: AppProcess;

  beforeAll(async () => {
    notifier = startTestNotifier(platform.database, platform.redis);
    tenant = await createTenant(platform.gateway);
    client = new TasklaneClient({ url: platform.gateway.url, apiKey: tenant.apiKey });
    dir = await mkdtemp(path.join(tmpdir(), "tasklane-cli-"));
  });

  afterAll(async () => {
    await notifier?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs the CLI to its end (bounded): the gateway runs in this process, so never spawnSync. */
  function cli(args: string[], options: CliOptions = {}): Promise<CliRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        env: { PATH: process.env.PATH ?? "", TASKLANE_URL: platform.gateway.url, TASKLANE_API_KEY: options.apiKey ?? tenant.apiKey },
        stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
        options.onStdout?.(stdout);
      });
      child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
      if (options.input !== undefined) child.stdin?.end(options.input);
    });
  }

  async function tasksFile(name: string, n: number, line: (i: number) => Record<string, unknown>): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, Array.from({ length: n }, (_, i) => JSON.stringify(line(i))).join("\n") + "\n");
    return file;
  }

  const statusCounts = async (ids: string[]) =>
    (await pool().query<{ status: string; n: number }>("SELECT status::text, count(*)::int AS n FROM tasks WHERE id = ANY($1) GROUP BY status ORDER BY status", [ids])).rows;

  it("submit loads 1,200 tasks from a file in three batches, a progress line each, every one in the queue", async () => {
    await client.queues.upsert({ name: "bulk", mode: "PULL" });
    const file = await tasksFile("bulk.ndjson", 1_200, (i) => ({ payload: { i }, ...(i % 2 === 0 ? { type: "even" } : {}) }));
    const run = await cli(["submit", "--queue", "bulk", "--type", "odd", "--file", file, "--json"]);
    expect(run.stderr.trimEnd().split("\n").map((l) => l.split("  ")[0])).toEqual(["500/1,200 tasks", "1,000/1,200 tasks", "1,200/1,200 tasks"]);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { queue: string; submitted: number; skipped: number; ids: string[] };
    expect({ ...out, ids: out.ids.length }).toEqual({ queue: "bulk", submitted: 1_200, skipped: 0, ids: 1_200 });

    const seen = new Map<string, { type: string; i: unknown }>();
    for await (const t of client.tasks.iterate({ queue: "bulk" }, { pageSize: 500 })) seen.set(t.id, { type: t.type, i: (t.payload as { i: number }).i });
    expect(seen.size).toBe(1_200);
    expect(out.ids.every((id) => seen.has(id))).toBe(true);
    // In file order, --type only where the line had none.
    expect(out.ids.slice(0, 3).map((id) => seen.get(id))).toEqual([
      { type: "even", i: 0 },
      { type: "odd", i: 1 },
      { type: "even", i: 2 },
    ]);
  });

  it("submit refuses a file with a bad line, naming it, and sends nothing; reads - from stdin", async () => {
    await client.queues.upsert({ name: "strict", mode: "PULL" });
    const bad = await cli(["submit", "--queue", "strict", "--type", "t", "--file", "-"], { input: '{"payload":1}\n{"priority":"SOON"}\n{"payload":3}\n' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: 1 bad line in stdin; nothing was submitted\nstdin:2: priority: /);
    expect((await client.tasks.list({ queue: "strict" })).totalCount).toBe(0);

    const good = await cli(["submit", "--queue", "strict", "--type", "t", "--file", "-", "--quiet"], { input: '{"payload":1}\n\n{"payload":3}\n' });
    expect(good.code).toBe(0);
    expect(good.stderr).toBe("");
    expect(good.stdout).toMatch(/^Submitted 2 tasks to queue "strict" in 1 batch \(/);
    expect((await client.tasks.list({ queue: "strict" })).totalCount).toBe(2);
  });

  it("tasks list --json is { totalCount, tasks }; get, cancel (CONFLICT the second time) and their exit codes", async () => {
    const list = await cli(["tasks", "list", "--queue", "bulk", "--status", "queued", "--limit", "3", "--json"]);
    expect(list.code).toBe(0);
    const listed = JSON.parse(list.stdout) as { totalCount: number; tasks: { id: string; queue: string; status: string; type: string }[] };
    expect(Object.keys(listed)).toEqual(["totalCount", "tasks"]);
    expect(listed.totalCount).toBe(1_200);
    expect(listed.tasks).toHaveLength(3);
    expect(listed.tasks[0]).toMatchObject({ queue: "bulk", status: "QUEUED", id: expect.stringMatching(/^task_/) });

    const table = await cli(["tasks", "list", "--queue", "bulk", "--limit", "2"]);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +TYPE +QUEUE +STATUS +PRIORITY +ATTEMPTS +CREATED$/);
    expect(table.stdout).toContain("2 of 1,200 tasks shown; --limit shows more.");

    const id = listed.tasks[0]!.id;
    const got = await cli(["tasks", "get", id]);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(new RegExp(`^id +${id}\\n`));
    expect(got.stdout).toMatch(/\nstatus +QUEUED\n/);

    const cancelled = await cli(["tasks", "cancel", id]);
    expect({ code: cancelled.code, stdout: cancelled.stdout }).toEqual({ code: 0, stdout: `Cancelled ${id}.\n` });
    expect((await client.tasks.get(id))?.status).toBe("CANCELLED");
    const again = await cli(["tasks", "cancel", id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: CONFLICT: /);

    const missing = await cli(["tasks", "get", "task_doesnotexist"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("error: NOT_FOUND: Task task_doesnotexist not found");
  });

  it("tasks watch follows a task to its end through live updates: exit 0 when it SUCCEEDED, 1 when it was cancelled", async () => {
    await client.queues.upsert({ name: "watched", mode: "PULL" });
    const succeeding = await client.tasks.submit({ type: "w", queue: "watched" });
    let printedQueued!: () => void;
    const queuedShown = new Promise<void>((resolve) => (printedQueued = resolve));
    const watching = cli(["tasks", "watch", succeeding.id, "--timeout", "40", "--json"], {
      onStdout: (out) => out.includes('"QUEUED"') && printedQueued(),
    });
    // The watch has read the task (QUEUED); then it runs and succeeds, which only an event tells it
    // within the bound below (its safety read comes after 15 s).
    await queuedShown;
    const [lease] = await client.leases.lease({ queue: "watched", workerId: "cli-test" });
    expect(lease?.task.id).toBe(succeeding.id);
    await client.leases.complete(succeeding.id, lease!.leaseToken, { ok: true });
    const completedAt = Date.now();
    const succeeded = await watching;
    expect(Date.now() - completedAt).toBeLessThan(10_000);
    expect(succeeded.code).toBe(0);
    const lines = succeeded.stdout.trimEnd().split("\n").map((l) => JSON.parse(l) as { status: string; result: unknown });
    // RUNNING shows only if its event was sent before the task completed (an event carries the task as it is then).
    expect(lines[0]).toMatchObject({ status: "QUEUED" });
    expect(lines.at(-1)).toMatchObject({ status: "SUCCEEDED", result: { ok: true } });

    const cancelled = await client.tasks.submit({ type: "w", queue: "watched", delaySeconds: 3600 });
    const watchingCancel = cli(["tasks", "watch", cancelled.id, "--timeout", "40"]);
    await client.tasks.cancel(cancelled.id);
    const ended = await watchingCancel;
    expect(ended.code).toBe(1);
    expect(ended.stdout.trimEnd().split("\n").at(-1)).toMatch(/ CANCELLED  attempt 0 of \d+$/);
  });

  it("queues list, pause and resume", async () => {
    const listed = await cli(["queues", "list", "--json"]);
    expect(listed.code).toBe(0);
    const queues = (JSON.parse(listed.stdout) as { queues: { name: string; paused: boolean; stats: { queued: number } }[] }).queues;
    expect(queues.map((q) => q.name).sort()).toEqual(["bulk", "default", "strict", "watched"]);
    expect(queues.find((q) => q.name === "bulk")?.stats.queued).toBe(1_199);

    const paused = await cli(["queues", "pause", "bulk"]);
    expect({ code: paused.code, stdout: paused.stdout }).toEqual({ code: 0, stdout: 'Paused queue "bulk": 1,199 queued tasks held until resume.\n' });
    expect((await client.queues.get("bulk"))?.paused).toBe(true);
    const resumed = await cli(["queues", "resume", "bulk"]);
    expect(resumed.code).toBe(0);
    expect((await client.queues.get("bulk"))?.paused).toBe(false);

    const unknown = await cli(["queues", "pause", "nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error: NOT_FOUND: Queue "nope" not found');
  });

  it("queues purge is refused without --yes when stdin is not a terminal, changing nothing; with --yes it purges", async () => {
    const refused = await cli(["queues", "purge", "strict"], { input: "y\n" });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('error: refusing to purge queue "strict" without --yes: standard input is not a terminal to confirm on');
    expect((await client.queues.get("strict"))?.stats.queued).toBe(2);

    const purged = await cli(["queues", "purge", "strict", "--yes"]);
    expect({ code: purged.code, stdout: purged.stdout }).toEqual({ code: 0, stdout: 'Purged queue "strict".\n' });
    expect((await client.tasks.list({ queue: "strict", status: ["CANCELLED"] })).totalCount).toBe(2);
  });

  it("dead-letters list, redrive --all with progress, discard --all --yes", async () => {
    const dead = async (n: number): Promise<string[]> => {
      const queue = await pool().query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = 'default'", [tenant.tenantId]);
      const ids = Array.from({ length: n }, () => newId(IdPrefix.task));
      await pool().query(
        `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                            backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds, last_error)
         SELECT id, $2, $3, 'dead', 'DEAD', now(), now(), now() - interval '1 hour' + ord * interval '1 millisecond', 1, 1, 'EXPONENTIAL', 1, true, 60, 'HTTP 500'
           FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)`,
        [ids, tenant.tenantId, queue.rows[0]!.id],
      );
      return ids;
    };
    const redriven = await dead(1_200);
    const list = await cli(["dead-letters", "list", "--queue", "default", "--limit", "1"]);
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(/^ID .* LAST ERROR$/);
    expect(list.stdout).toContain("HTTP 500");
    expect(list.stdout).toContain("1 of 1,200 dead tasks shown");

    const redrive = await cli(["dead-letters", "redrive", "--all", "--queue", "default"]);
    expect(redrive.code).toBe(0);
    expect(redrive.stdout).toBe('Redrove 1,200 dead tasks of queue "default".\n');
    expect(redrive.stderr.trimEnd().split("\n").map((l) => l.split("  ")[0])).toEqual(["1,000/1,200 dead tasks", "1,200/1,200 dead tasks"]);
    expect(await statusCounts(redriven)).toEqual([{ status: "QUEUED", n: 1_200 }]);

    const discarded = await dead(3);
    const refused = await cli(["dead-letters", "discard", "--all"]);
    expect(refused.code).toBe(2);
    const discard = await cli(["dead-letters", "discard", "--all", "--yes", "--json"]);
    expect(discard.code).toBe(0);
    expect(JSON.parse(discard.stdout)).toEqual({ discarded: 3 });
    expect(await statusCounts(discarded)).toEqual([{ status: "CANCELLED", n: 3 }]);
  });

  it("a bad API key is exit 1 with UNAUTHENTICATED on stderr, the key not echoed; a usage error is exit 2", async () => {
    const badKey = "tlk_not_a_real_key_123456";
    const unauthenticated = await cli(["queues", "list"], { apiKey: badKey });
    expect(unauthenticated.code).toBe(1);
    expect(unauthenticated.stdout).toBe("");
    expect(unauthenticated.stderr).toMatch(/^error: UNAUTHENTICATED: /);
    expect(unauthenticated.stderr).not.toContain(badKey);

    const usage = await cli(["tasks", "list", "--limit", "0"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("error: option '--limit <n>' argument '0' is invalid");
    const unknown = await cli(["frobnicate"]);
    expect(unknown.code).toBe(2);
  });
});
