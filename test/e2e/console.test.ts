/**
 * The console in Debian's headless Chromium (playwright-core) against the
 * real platform: an in-process gateway, scheduler, worker and notifier
 * processes, the built console (`next start`), a PUSH receiver, a fresh
 * database and a Redis key prefix of its own on DB 0.
 *
 * SAVE_SCREENSHOTS=1 also writes the main pages to docs/screenshots/*.png
 * (off by default, so test runs never rewrite the committed pictures).
 * The tests run in order and build on each other, like a person's session.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { nextOccurrences } from "@tasklane/core";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { repoRoot, waitFor } from "../helpers/app-process.js";
import { startConsolePlatform, type ConsolePlatform } from "../helpers/console-platform.js";
import type { ConsoleProcess } from "../helpers/console-process.js";
import type { HttpReceiver } from "../helpers/http-receiver.js";
import { codeOf, type CreatedTenant, type StartedGateway, type TestDatabase } from "../helpers/platform.js";
import { seedFinishedTasks } from "../helpers/seed.js";

const EMAIL = "ada@example.com";
const PASSWORD = "correct horse battery staple";

let p: ConsolePlatform;
let page: Page;
let context: BrowserContext;
let gateway: StartedGateway;
let tenant: CreatedTenant;
let consoleApp: ConsoleProcess;
let receiver: HttpReceiver;
let tdb: TestDatabase;
let behaviour: ConsolePlatform["behaviour"];
const api = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>, key?: string) => p.api<T>(query, variables, key);
const submit = (input: Record<string, unknown>) => p.submit(input);
const statusOf = (id: string) => p.statusOf(id);
const until = (id: string, status: string) => p.until(id, status);
const open = (pathname: string) => p.open(pathname);
const screenshot = (name: string) => p.screenshot(name);

beforeAll(async () => {
  p = await startConsolePlatform("Acme Robotics", { dailyTaskQuota: 10_000, maxPendingTasks: 5_000, maxConcurrency: 50 });
  ({ page, context, gateway, tenant, consoleApp, receiver, tdb, behaviour } = p);
}, 180_000);

afterAll(async () => {
  await p?.stop();
});

describe("tenant console", () => {
  it("creates the first console user with the documented CLI", async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(repoRoot, "scripts/console-create-user.mjs"), "--tenant", tenant.tenantId, "--email", EMAIL, "--password", PASSWORD],
      { env: { ...process.env, ADMIN_TOKEN: gateway.adminToken, TASKLANE_API_URL: gateway.url } },
    );
    expect(stdout).toContain(`created console user ${EMAIL}`);
  });

  it("signs in (a wrong password is refused) and keeps the API key out of the browser", async () => {
    await page.goto(`${consoleApp.url}/tasks`);
    await page.waitForURL(/\/signin/);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.locator(".notice-error").getByText("do not match").waitFor({ timeout: 15_000 });

    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    // Back to the page asked for before sign-in (console-forms.test.ts covers deep links further).
    await page.getByRole("heading", { name: "Tasks", level: 1 }).waitFor({ timeout: 30_000 });
    expect(new URL(page.url()).pathname).toBe("/tasks");
    expect(await page.getByTestId("tenant-name").textContent()).toBe("Acme Robotics");

    const cookies = await context.cookies();
    const sessionCookie = cookies.find((c) => c.name.endsWith("next-auth.session-token"));
    expect(sessionCookie?.httpOnly).toBe(true);
    const session = await page.evaluate(async () => (await fetch("/api/auth/session")).text());
    expect(session).toContain(EMAIL);
    expect(session).not.toMatch(/tl_[a-z0-9]{8}_/);
    expect(session).not.toContain(gateway.adminToken);
    const html = await page.content();
    expect(html).not.toMatch(/tl_[a-z0-9]{8}_/);
    expect(html).not.toContain(gateway.adminToken);
  });

  it("refuses a cross-origin request to its live route", async () => {
    const res = await fetch(`${consoleApp.url}/api/live`, { headers: { origin: "https://evil.example" } });
    expect(res.status).toBe(403);
    expect((await fetch(`${consoleApp.url}/api/live`)).status).toBe(401);
  });

  it("creates a PUSH queue", async () => {
    await open("/queues/new");
    await page.getByLabel("Name").fill("hooks");
    await page.getByLabel(/^PUSH/).check();
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/tasks`);
    await page.getByLabel("Concurrency").fill("20");
    await page.getByRole("button", { name: "Create queue" }).click();
    await page.waitForURL(/\/queues\?created=hooks/);
    await page.locator('tr[data-queue="hooks"]').waitFor();
    const queue = await api<{ queue: { mode: string; endpointUrl: string; concurrency: number } | null }>(`{ queue(name: "hooks") { mode endpointUrl concurrency } }`);
    expect(queue.data?.queue).toEqual({ mode: "PUSH", endpointUrl: `${receiver.url}/tasks`, concurrency: 20 });
    await screenshot("queues");
  });

  it("shows a task submitted through the API turn SUCCEEDED in the list without a reload", async () => {
    behaviour.set("slow-report", () => ({ status: 200, delayMs: 2_500 }));
    await open("/tasks");
    await page.evaluate(() => {
      (window as unknown as { __noReload: boolean }).__noReload = true;
    });
    const task = await submit({ type: "slow-report", payload: { month: "2026-11" } });
    const row = page.locator(`tr[data-task-id="${task.id}"]`);
    await row.waitFor({ timeout: 20_000 });
    await row.locator('[data-status="SUCCEEDED"]').waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
    expect(await statusOf(task.id)).toBe("SUCCEEDED");
    // A few more outcomes for the pictures and the overview's charts.
    behaviour.set("flaky", (attempt) => ({ status: attempt === 1 ? 503 : 200 }));
    for (let i = 0; i < 12; i++) await submit({ type: i % 3 === 0 ? "flaky" : "send-invoice", payload: { n: i }, maxAttempts: 3, backoff: { strategy: "FIXED", delaySeconds: 0.2, jitter: false } });
    await expect.poll(() => page.locator("tbody tr").count(), { timeout: 20_000 }).toBe(13);
    await screenshot("tasks");

    await open(`/tasks/${task.id}`);
    await page.locator('[data-testid="task-status"] [data-status="SUCCEEDED"]').waitFor();
    await page.locator('.timeline li[data-outcome="SUCCEEDED"]').waitFor();
    expect(await page.locator(".timeline li").first().textContent()).toMatch(/lt_1_/);
    expect(await page.getByRole("region", { name: "Payload" }).textContent()).toContain("2026-11");
    await screenshot("task-detail");
  });

  it("cancels a waiting task after confirmation", async () => {
    const task = await submit({ type: "later", delaySeconds: 600 });
    await open(`/tasks/${task.id}`);
    await page.getByRole("button", { name: "Cancel task" }).click();
    const dialog = page.getByRole("dialog", { name: "Cancel this task?" });
    await dialog.waitFor();
    // Escape dismisses the question without doing anything.
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect(await statusOf(task.id)).toBe("SCHEDULED");
    await page.getByRole("button", { name: "Cancel task" }).click();
    await dialog.getByRole("button", { name: "Cancel task" }).click();
    await until(task.id, "CANCELLED");
    await page.locator('[data-testid="task-status"] [data-status="CANCELLED"]').waitFor({ timeout: 15_000 });
    // The button that asked goes with the status it acted on; the page itself says what was done.
    await page.getByRole("status").filter({ hasText: "Task cancelled." }).waitFor({ timeout: 15_000 });
  });

  it("redrives a dead task and discards others from the dead-letter page", async () => {
    let fixed = false;
    behaviour.set("poison", () => ({ status: fixed ? 200 : 400 }));
    const poison = await submit({ type: "poison", payload: { order: 42 } });
    const junk = [await submit({ type: "obsolete", queue: "default" }), await submit({ type: "obsolete", queue: "default" })];
    for (const t of junk) {
      const leased = await api<{ leaseTasks: { leaseToken: string; task: { id: string } }[] }>(`mutation { leaseTasks(queue: "default", workerId: "e2e", max: 1) { leaseToken task { id } } }`);
      const lease = leased.data!.leaseTasks[0]!;
      await api(`mutation ($t: ID!, $l: String!) { failTask(taskId: $t, leaseToken: $l, error: "schema v1 is gone", retryable: false) { status } }`, { t: lease.task.id, l: lease.leaseToken });
      expect(junk.map((j) => j.id)).toContain(lease.task.id);
    }
    await until(poison.id, "DEAD");
    await open("/dead-letters");
    await page.locator(`tr[data-task-id="${poison.id}"]`).waitFor();
    await screenshot("dead-letters");

    fixed = true;
    await page.getByRole("checkbox", { name: `Select ${poison.id}` }).check();
    await page.getByRole("button", { name: "Redrive selected" }).click();
    await page.getByRole("dialog", { name: "Redrive 1 task?" }).getByRole("button", { name: "Redrive 1 task" }).click();
    await until(poison.id, "SUCCEEDED");
    await page.locator(`tr[data-task-id="${poison.id}"]`).waitFor({ state: "detached", timeout: 15_000 });

    await page.getByRole("checkbox", { name: "Select all tasks on this page" }).check();
    await page.getByRole("button", { name: "Discard selected" }).click();
    await page.getByRole("dialog", { name: "Discard 2 tasks?" }).getByRole("button", { name: "Discard 2 tasks" }).click();
    for (const t of junk) await until(t.id, "CANCELLED");
    await page.getByRole("heading", { name: "No dead letters" }).waitFor({ timeout: 15_000 });
  });

  it("creates a schedule and previews its next runs in the chosen time zone", async () => {
    await open("/schedules/new");
    await page.getByLabel("Name").fill("weekday-digest");
    await page.getByLabel("Cron expression").fill("61 * * * *");
    await expect.poll(() => page.getByTestId("cron-preview").textContent(), { timeout: 15_000 }).toMatch(/Cron:/);
    await page.getByLabel("Cron expression").fill("30 9 * * 1-5");
    await page.getByLabel("Time zone").fill("Europe/Berlin");
    const expected = nextOccurrences("30 9 * * 1-5", "Europe/Berlin", new Date(), 5).map((d) => d.toISOString().replace(".000Z", "Z"));
    const preview = page.getByTestId("cron-preview");
    await expect.poll(() => preview.textContent(), { timeout: 15_000 }).toContain(expected[4]);
    expect(await preview.locator("li").count()).toBe(5);
    expect(await preview.textContent()).toContain("Next 5 runs in Europe/Berlin");
    expect(await preview.locator("li").first().textContent()).toContain("09:30:00");
    await page.getByLabel("Task type").fill("send-digest");
    await page.getByLabel("Queue", { exact: true }).selectOption("hooks");
    await page.getByLabel("Payload (JSON)").fill('{"channel": "email"}');
    await screenshot("schedule-preview");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.waitForURL(/\/schedules\/sch_.*created=1/);
    await page.getByText("Schedule created.").waitFor();
    const schedules = await api<{ schedules: { name: string; cron: string; timezone: string; enabled: boolean; nextRunAt: string }[] }>(`{ schedules { name cron timezone enabled nextRunAt } }`);
    expect(schedules.data?.schedules).toEqual([{ name: "weekday-digest", cron: "30 9 * * 1-5", timezone: "Europe/Berlin", enabled: true, nextRunAt: new Date(expected[0]!).toISOString() }]);

    await page.getByRole("button", { name: "Trigger now" }).click();
    await page.getByRole("dialog", { name: /Run weekday-digest now/ }).getByRole("button", { name: "Run now" }).click();
    await page.getByRole("link", { name: "Open it" }).waitFor({ timeout: 15_000 });
  });

  it("shows a workflow as a graph coloured by status, updating live", async () => {
    behaviour.set("wf-publish", () => ({ status: 200, delayMs: 8_000 }));
    const res = await api<{ submitWorkflow: { id: string } }>(`mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`, {
      i: {
        name: "image-pipeline",
        tasks: [
          { key: "fetch", type: "wf-fetch", queue: "hooks" },
          { key: "resize", type: "wf-resize", queue: "hooks", dependsOn: ["fetch"] },
          { key: "thumbnails", type: "wf-thumbs", queue: "hooks", dependsOn: ["fetch"] },
          { key: "publish", type: "wf-publish", queue: "hooks", dependsOn: ["resize", "thumbnails"] },
        ],
      },
    });
    expect(res.errors).toBeUndefined();
    const id = res.data!.submitWorkflow.id;
    await open(`/workflows/${id}`);
    const graph = page.getByTestId("workflow-graph");
    await graph.locator(".wf-node").nth(3).waitFor();
    // Read-only: each task is one tab stop (its link), and nothing tells a screen reader to move or delete a node.
    const keyboard = await graph.evaluate((el) => ({
      stopsBesideLinks: [...el.querySelectorAll('[tabindex="0"]')].filter((e) => !e.matches("a")).length,
      described: [...el.querySelectorAll("[aria-describedby]")]
        .flatMap((e) => (e.getAttribute("aria-describedby") ?? "").split(" "))
        .map((id) => document.getElementById(id)?.textContent ?? "")
        .join(" "),
    }));
    expect(keyboard.stopsBesideLinks).toBe(0);
    expect(keyboard.described).not.toMatch(/move|delete|remove/i);
    // publish waits for resize and thumbnails, then runs for 8 s: it is seen RUNNING, then SUCCEEDED, without a reload.
    await graph.locator('.wf-node[data-node-status="RUNNING"]', { hasText: "wf-publish" }).waitFor({ timeout: 30_000 });
    await screenshot("workflow");
    await expect.poll(() => graph.locator('.wf-node[data-node-status="SUCCEEDED"]').count(), { timeout: 30_000 }).toBe(4);
    await expect.poll(() => page.locator("h1").textContent(), { timeout: 15_000 }).toContain("SUCCEEDED");
  });

  it("adds a webhook endpoint (secret shown once) and shows its deliveries with response codes, and a callback's error", async () => {
    await open("/webhooks");
    await page.getByLabel("Endpoint URL").fill(`${receiver.url}/hooks`);
    await page.getByLabel("task.succeeded").check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    expect(await page.getByTestId("secret").textContent({ timeout: 15_000 })).toMatch(/^whsec_/);
    await submit({ type: "notify-me" });
    await page.locator('tr[data-delivery-event="task.succeeded"][data-delivery-status="DELIVERED"]').first().waitFor({ timeout: 45_000 });
    expect(await page.locator('tr[data-delivery-event="task.succeeded"]').first().textContent()).toContain("200");

    // A task's callback to an address nobody listens on: the log says it is a callback, and why no response came.
    await submit({ type: "call-me-back", callbackUrl: "http://127.0.0.1:1/callback" });
    const failed = page.locator('tr[data-delivery-event="task.succeeded"][data-delivery-status="PENDING"]', { hasText: "task callback" }).first();
    await expect.poll(async () => {
      await page.reload();
      return (await failed.count()) > 0 ? failed.locator("td.delivery-error").textContent() : null;
    }, { timeout: 45_000, interval: 1_000 }).toMatch(/^network error: /);
    expect(await page.locator('tr[data-delivery-event="task.succeeded"][data-delivery-status="DELIVERED"]').first().textContent()).toContain("endpoint");
  });

  it("creates an API key (secret shown once) and revokes it", async () => {
    await open("/api-keys");
    await page.getByLabel("Name").fill("ci-deployer");
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = (await page.getByTestId("secret").textContent({ timeout: 15_000 })) ?? "";
    expect(secret).toMatch(/^tl_[a-z0-9]{8}_/);
    expect((await api(`{ tenant { id } }`, undefined, secret)).errors).toBeUndefined();
    const row = page.locator('tr[data-key-name="ci-deployer"]');
    await row.waitFor();
    await screenshot("api-keys");
    await row.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("dialog", { name: "Revoke “ci-deployer”?" }).getByRole("button", { name: "Revoke key" }).click();
    await page.locator('tr[data-key-name="ci-deployer"][data-key-state="Revoked"]').waitFor({ timeout: 15_000 });
    await waitFor("the revoked key to be refused", async () => codeOf(await api(`{ tenant { id } }`, undefined, secret)) === "UNAUTHENTICATED", 10_000, 200);
    // After reload the secret is gone for good (counted once the key list has rendered, so an unrendered page cannot pass).
    await page.reload();
    await page.locator('tr[data-key-name="ci-deployer"][data-key-state="Revoked"]').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId("secret").count()).toBe(0);
  });

  it("shows the overview with live counts and the last hour's charts", async () => {
    await open("/");
    const hooks = page.locator('section[data-queue="hooks"]');
    await hooks.waitFor();
    // Recharts draws after hydration has measured its container, so the section can be in the page before its charts.
    await expect.poll(() => hooks.locator(".recharts-surface").count(), { timeout: 15_000 }).toBe(2);
    expect(await hooks.textContent()).toMatch(/tasks succeeded/);
    await screenshot("overview");
  });

  it("renders every other page with content, an empty state or a clear error state", async () => {
    for (const [pathname, expectation] of [
      ["/workflows", /Workflows/],
      ["/webhooks", /Webhooks/],
      ["/usage", /Submitted today/],
      ["/schedules", /weekday-digest/],
    ] as const) {
      await open(pathname);
      expect(await page.locator("main").textContent()).toMatch(expectation);
      if (pathname === "/usage") await screenshot("usage");
    }
    await open("/tasks/task_0190f0f0f0f07000800000000000000a");
    await page.getByRole("heading", { name: "Not found" }).waitFor();
  });

  it("stays fast with 100,000 tasks", async () => {
    /** Median of three full page loads in the browser (server render, API calls, hydration). */
    const medianLoad = async (pathname: string): Promise<number> => {
      const samples: number[] = [];
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        await open(pathname);
        await page.locator("tbody tr").first().waitFor();
        samples.push(Date.now() - started);
      }
      return samples.sort((a, b) => a - b)[1]!;
    };
    const baseline = await medianLoad("/tasks");

    const queueId = (await tdb.db.pool.query("SELECT id FROM queues WHERE tenant_id = $1 AND name = 'default'", [tenant.tenantId])).rows[0].id as string;
    await seedFinishedTasks(tdb.db.pool, tenant.tenantId, queueId, 100_000);
    await tdb.db.pool.query("ANALYZE tasks");

    // That a page's database work does not grow with the table is asserted as rows read, in
    // task-list-plans.test.ts; wall time on a busy 2-core machine is too noisy for that. Here the
    // bound is only generous enough to hold: the whole page still loads, in a time of the order
    // of this run's own baseline.
    const timings: string[] = [`baseline /tasks: ${baseline} ms`];
    for (const pathname of ["/tasks", "/tasks?status=SUCCEEDED&queue=default&type=bulk-3", "/tasks?status=CANCELLED&range=24h"]) {
      const median = await medianLoad(pathname);
      timings.push(`${pathname}: ${median} ms`);
      expect(median, `${pathname} with 100k tasks: ${median} ms (baseline ${baseline} ms)`).toBeLessThan(Math.min(baseline * 4 + 5_000, 20_000));
    }
    console.info(`console task list, median page loads with 100k tasks: ${timings.join(", ")}`);

    const cancelled = await api<{ tasks: { totalCount: number } }>(`{ tasks(filter: {status: [CANCELLED]}, first: 1) { totalCount } }`);
    expect(cancelled.data?.tasks.totalCount).toBeGreaterThanOrEqual(10_000);
    const pagination = page.locator(".pagination");
    expect(await pagination.textContent()).toContain(`of ${cancelled.data!.tasks.totalCount.toLocaleString("en-GB")}`);
    const firstOnPage1 = await page.locator("tbody tr").first().getAttribute("data-task-id");
    await page.getByRole("link", { name: "Next →" }).click();
    await pagination.filter({ hasText: "Page 2" }).waitFor({ timeout: 15_000 });
    expect(await page.locator("tbody tr").first().getAttribute("data-task-id")).not.toBe(firstOnPage1);
    await page.getByRole("link", { name: "← Previous" }).click();
    await pagination.filter({ hasText: "Page 1" }).waitFor({ timeout: 15_000 });
    expect(await page.locator("tbody tr").first().getAttribute("data-task-id")).toBe(firstOnPage1);
  }, 180_000);

  it("signs out and revokes the session key", async () => {
    await open("/");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/\/signin/);
    await waitFor(
      "the console session key to be revoked",
      async () => {
        const keys = await api<{ apiKeys: { name: string; revokedAt: string | null }[] }>(`{ apiKeys { name revokedAt } }`);
        const sessions = keys.data?.apiKeys.filter((k) => k.name === `console session ${EMAIL}`) ?? [];
        return sessions.length > 0 && sessions.every((k) => k.revokedAt !== null);
      },
      15_000,
      200,
    );
    await page.goto(`${consoleApp.url}/`);
    await page.waitForURL(/\/signin/);
  });
});
