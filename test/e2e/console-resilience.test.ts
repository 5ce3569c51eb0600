/**
 * The console when a person pages past the end of a list, watches long work,
 * calls a server action without a session, and when the gateway goes away and comes back,
 * in Debian's headless Chromium against
 * the real platform (the same setup as console.test.ts). What a QA pass found
 * broken, each checked the way a person meets it. The tests run in order.
 */
import { IdPrefix, newId } from "@tasklane/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser, startConsolePlatform, type ConsolePlatform } from "../helpers/console-platform.js";

const EMAIL = "barbara@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;

beforeAll(async () => {
  p = await startConsolePlatform("Resilient Ltd", { dailyTaskQuota: 10_000 });
  page = p.page;
  await createConsoleUser(p, EMAIL, PASSWORD);
}, 180_000);

afterAll(async () => {
  await p?.stop();
});

describe("console robustness", () => {
  it("signs in", async () => {
    await page.goto(`${p.consoleApp.url}/signin`);
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByTestId("tenant-name").waitFor({ timeout: 30_000 });
  });

  it("says the session has ended when its cookie no longer works, and nothing of the kind when there was none", async () => {
    const other = await p.context.browser()!.newContext();
    try {
      const stranger = await other.newPage();
      await stranger.goto(`${p.consoleApp.url}/tasks`);
      await stranger.waitForURL(/\/signin/);
      await stranger.getByRole("button", { name: "Sign in" }).waitFor();
      expect(await stranger.getByText("Your session has ended").count()).toBe(0);
      // A cookie the console cannot use any more (sealed by another secret here; its key past its 12 h alike).
      await other.addCookies([{ name: "next-auth.session-token", value: "sealed.by.another.console", url: p.consoleApp.url }]);
      await stranger.goto(`${p.consoleApp.url}/tasks`);
      await stranger.waitForURL(/reason=expired/);
      await stranger.getByText("Your session has ended. Sign in again to continue.").waitFor();
    } finally {
      await other.close();
    }
  });

  it("a page of tasks past the end says so and leads back to the first page, not 'No tasks yet'", async () => {
    for (let i = 0; i < 3; i++) await p.submit({ type: "listed", queue: "default" });
    const all = await p.api<{ tasks: { pageInfo: { endCursor: string } } }>(`{ tasks(first: 100) { pageInfo { endCursor } } }`);
    // An old link to page 2, from when there were more tasks than a page.
    await p.open(`/tasks?after=${encodeURIComponent(all.data!.tasks.pageInfo.endCursor)}&prev=-`);
    await page.getByRole("heading", { name: "No more tasks on this page" }).waitFor();
    expect(await page.getByRole("heading", { name: "No tasks yet" }).count()).toBe(0);
    expect(await page.locator("main").textContent()).toContain("3 tasks in all");
    await page.getByRole("link", { name: "Back to the first page" }).click();
    await page.locator(".pagination").filter({ hasText: "Page 1 · 3 shown of 3" }).waitFor({ timeout: 15_000 });
  });

  it("discarding the last dead letter of page 2 says the page is past the end, not that nothing has died", async () => {
    const queueId = (await p.tdb.db.pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = 'default'", [p.tenant.tenantId])).rows[0]!.id;
    // 101 dead tasks, a second apart: a page is 100, so page 2 holds the oldest alone.
    const ids = Array.from({ length: 101 }, () => newId(IdPrefix.task));
    await p.tdb.db.pool.query(
      `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts,
                          backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds, last_error)
       SELECT id, $2, $3, 'doomed', 'DEAD'::"TaskStatus", now() - interval '1 hour', now() - interval '1 hour',
              now() - ord * interval '1 second', 1, 1, 'EXPONENTIAL', 1, true, 60, 'HTTP 400'
         FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)`,
      [ids, p.tenant.tenantId, queueId],
    );
    await p.open("/dead-letters");
    await page.locator("tbody tr").nth(99).waitFor();
    await page.getByRole("link", { name: "Next →" }).click();
    await page.locator(".pagination").filter({ hasText: "Page 2" }).waitFor({ timeout: 15_000 });
    expect(await page.locator("tbody tr").count()).toBe(1);

    await page.getByRole("checkbox", { name: "Select all tasks on this page" }).check();
    await page.getByRole("button", { name: "Discard selected" }).click();
    await page.getByRole("dialog", { name: "Discard 1 task?" }).getByRole("button", { name: "Discard 1 task" }).click();
    await page.getByRole("heading", { name: "No more dead letters on this page" }).waitFor({ timeout: 15_000 });
    expect(await page.getByRole("heading", { name: "No dead letters" }).count()).toBe(0);
    expect(await page.locator("main").textContent()).toContain("100 dead letters in all");
    await page.getByRole("link", { name: "Back to the first page" }).click();
    await page.locator(".pagination").filter({ hasText: "Page 1 · 100 shown of 100" }).waitFor({ timeout: 15_000 });
  });

  it("shows how long a running attempt has run so far (it said 'Duration —' until it ended)", async () => {
    p.behaviour.set("long-export", () => ({ status: 200, delayMs: 10_000 }));
    const hooks = await p.api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "hooks", mode: "PUSH", endpointUrl: `${p.receiver.url}/tasks` } });
    expect(hooks.errors).toBeUndefined();
    const task = await p.submit({ type: "long-export" });
    await p.until(task.id, "RUNNING");
    await p.open(`/tasks/${task.id}`);
    const running = page.locator('.timeline li[data-outcome="RUNNING"]');
    await running.waitFor();
    expect(await running.textContent()).toMatch(/Duration\d[\d.]* (ms|s) so far/);
  });

  it("answers a server action called without a session with no data (the cron preview answered anyone)", async () => {
    await p.open("/schedules/new");
    const request = page.waitForRequest((r) => r.method() === "POST" && r.headers()["next-action"] !== undefined);
    await page.getByLabel("Cron expression").fill("*/7 * * * *");
    const sent = await request;
    const call = (cookie: string | null) =>
      fetch(`${p.consoleApp.url}/schedules/new`, {
        method: "POST",
        redirect: "manual",
        headers: {
          "next-action": sent.headers()["next-action"]!,
          "content-type": sent.headers()["content-type"] ?? "text/plain;charset=UTF-8",
          accept: "text/x-component",
          origin: p.consoleApp.url,
          ...(cookie ? { cookie } : {}),
        },
        body: sent.postData() ?? "",
      }).then(async (res) => ({ status: res.status, body: await res.text() }));
    // The replayed call is the real one: with the session cookie it answers the preview.
    const cookie = (await p.context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
    expect((await call(cookie)).body).toContain('"times"');
    const anonymous = await call(null);
    expect(anonymous.body, `HTTP ${anonymous.status}`).not.toContain('"times"');
  });

  it("says the API cannot be reached while the gateway is down, and goes live again once it is back", async () => {
    await p.open("/tasks");
    await page.locator('[data-live-mode="live"]').waitFor({ timeout: 30_000 });
    const restart = await p.stopGateway();
    try {
      await page.locator('[data-live-mode="polling"]').waitFor({ timeout: 30_000 });
      // The polled page says what is wrong in words, not a stack trace or a blank screen.
      const failed = page.getByRole("alert", { name: "Could not load tasks" });
      await failed.waitFor({ timeout: 30_000 });
      expect(await failed.textContent()).toContain("The Tasklane API could not be reached");
      // Named as the page names it ("api keys" before).
      await p.open("/api-keys");
      await page.getByRole("alert", { name: "Could not load API keys", exact: true }).waitFor({ timeout: 30_000 });
      await p.open("/tasks");
    } finally {
      await restart();
    }
    // It used to poll every 2 s for good, until the page was reloaded.
    await page.locator('[data-live-mode="live"]').waitFor({ timeout: 120_000 });
    const task = await p.submit({ type: "after-restart", queue: "default" });
    await page.locator(`tr[data-task-id="${task.id}"]`).waitFor({ timeout: 30_000 });
  }, 240_000);
});
