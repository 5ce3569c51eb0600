/**
 * The console's forms, selections and small screens in Debian's headless
 * Chromium against the real platform (the same setup as console.test.ts):
 * what a QA pass found broken, each checked the way a person meets it.
 * The tests run in order and build on each other, like a person's session.
 */
import { IdPrefix, newId } from "@tasklane/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../helpers/app-process.js";
import { createConsoleUser, startConsolePlatform, type ConsolePlatform } from "../helpers/console-platform.js";
import { startConsole } from "../helpers/console-process.js";

const EMAIL = "grace@example.com";
const PASSWORD = "a password long enough";
const FUTURE = "2099-01-01T00:00";

let p: ConsolePlatform;
let page: Page;
let url: string;
/** The schedule the settings test makes, looked at again at 390 px. */
let scheduleId: string;
const api = <T = Record<string, unknown>>(query: string, variables?: Record<string, unknown>) => p.api<T>(query, variables);
const open = (pathname: string) => p.open(pathname);

async function signIn(on: Page): Promise<void> {
  await on.getByLabel("Email").fill(EMAIL);
  await on.getByLabel("Password").fill(PASSWORD);
  await on.getByRole("button", { name: "Sign in" }).click();
}

interface QueueView {
  mode: string;
  endpointUrl: string | null;
  concurrency: number | null;
  paused: boolean;
}
const queueView = async (name: string) =>
  (await api<{ queue: QueueView | null }>(`query ($n: String!) { queue(name: $n) { mode endpointUrl concurrency paused } }`, { n: name })).data?.queue;

beforeAll(async () => {
  p = await startConsolePlatform("Forms Ltd", { dailyTaskQuota: 10_000, maxPendingTasks: 5_000, maxConcurrency: 50 });
  page = p.page;
  url = p.consoleApp.url;
  await createConsoleUser(p, EMAIL, PASSWORD);
  const hooks = await api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "hooks", mode: "PUSH", endpointUrl: `${p.receiver.url}/tasks` } });
  expect(hooks.errors).toBeUndefined();
}, 180_000);

afterAll(async () => {
  await p?.stop();
});

describe("console forms, selections and small screens", () => {
  it("serves an icon: a fresh sign-in page loads without a failed request", async () => {
    const failed: string[] = [];
    const listener = (res: { status(): number; url(): string }) => {
      if (res.status() >= 400) failed.push(`${res.status()} ${res.url()}`);
    };
    page.on("response", listener);
    await page.goto(`${url}/signin`);
    await page.waitForLoadState("networkidle");
    page.off("response", listener);
    expect(failed).toEqual([]);
    const icon = await page.locator('link[rel="icon"]').getAttribute("href");
    expect(icon).toMatch(/^\/icon\.svg/);
    for (const path of [icon!, "/favicon.ico"]) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toContain("image/svg+xml");
    }
  });

  it("returns to the requested page after sign-in, and never to another origin", async () => {
    const task = await p.submit({ type: "deep-link", queue: "default" });
    const deepLink = `/tasks/${task.id}?tab=attempts`;
    await page.goto(`${url}${deepLink}`);
    await page.waitForURL(/\/signin/);
    const callbackUrl = new URL(page.url()).searchParams.get("callbackUrl");
    // Signed in before asserting, so the tests after this one run signed in whatever happens here.
    await signIn(page);
    await page.getByTestId("tenant-name").waitFor({ timeout: 30_000 });
    expect(callbackUrl).toBe(deepLink);
    await expect.poll(() => page.url(), { timeout: 15_000 }).toBe(`${url}${deepLink}`);
    await page.locator('[data-testid="task-status"]').waitFor();

    // A callback naming another origin lands on the overview instead.
    const other = await p.context.browser()!.newContext();
    try {
      const stranger = await other.newPage();
      await stranger.goto(`${url}/signin?callbackUrl=${encodeURIComponent("//evil.example/tasks")}`);
      await signIn(stranger);
      await stranger.getByRole("heading", { name: "Overview", level: 1 }).waitFor({ timeout: 30_000 });
      expect(stranger.url()).toBe(`${url}/`);
    } finally {
      await other.close();
    }
  });

  it("refuses a new queue named like an existing one, changes nothing, and keeps what was typed", async () => {
    expect((await api(`mutation { upsertQueue(input: {name: "billing", mode: PULL, concurrency: 3}) { name } }`)).errors).toBeUndefined();
    await open("/queues/new");
    await page.getByLabel("Name").fill("billing");
    await page.getByLabel(/^PUSH/).check();
    await page.getByLabel("Endpoint URL").fill(`${p.receiver.url}/billing`);
    await page.getByLabel("Concurrency").fill("9");
    await page.getByRole("button", { name: "Create queue" }).click();
    await page.locator(".notice-error").getByText("A queue named billing already exists").waitFor({ timeout: 15_000 });
    expect(page.url()).toBe(`${url}/queues/new`);
    expect(await queueView("billing")).toEqual({ mode: "PULL", endpointUrl: null, concurrency: 3, paused: false });
    expect(await page.getByLabel("Name").inputValue()).toBe("billing");
    expect(await page.getByLabel("Endpoint URL").inputValue()).toBe(`${p.receiver.url}/billing`);
    expect(await page.getByLabel("Concurrency").inputValue()).toBe("9");
  });

  it("holds a new queue's name to the API's 64 characters and states the API's rule", async () => {
    await open("/queues/new");
    const name = page.getByLabel("Name");
    await name.fill("q".repeat(70));
    expect((await name.inputValue()).length).toBe(64);
    const rule = "1-64 characters of letters, digits, '_', '.', '-', starting with a letter or digit";
    expect(await page.locator("#name-hint").textContent()).toContain(rule);
    // A name of the right length the API refuses for its first character: its words, on the field.
    await name.fill("-leading-dash");
    await page.getByLabel(/^PULL/).check();
    await page.getByRole("button", { name: "Create queue" }).click();
    await page.locator("#name-error").getByText(rule).waitFor({ timeout: 15_000 });
    expect(await queueView("-leading-dash")).toBeFalsy();
  });

  it("saving a queue's settings keeps a pause made on the same page", async () => {
    await open("/queues/billing");
    await page.getByRole("button", { name: "Pause", exact: true }).click();
    await page.getByRole("dialog", { name: "Pause billing?" }).getByRole("button", { name: "Pause" }).click();
    await page.locator(".page-header").getByText("PULL queue · paused").waitFor({ timeout: 15_000 });
    await page.getByLabel("Concurrency").fill("7");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Queue saved.").waitFor({ timeout: 15_000 });
    expect(await queueView("billing")).toMatchObject({ concurrency: 7, paused: true });
  });

  it("clearing a queue's limits in its settings removes them, as the form's hints say", async () => {
    const set = await api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "limited", mode: "PULL", concurrency: 12, rateLimit: { perSecond: 5 } } });
    expect(set.errors).toBeUndefined();
    await open("/queues/limited");
    expect(await page.getByLabel("Concurrency").inputValue()).toBe("12");
    await page.getByLabel("Concurrency").fill("");
    await page.getByLabel("Rate limit (starts per second)").fill("");
    await page.getByLabel("Burst").fill("");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText("Queue saved.").waitFor({ timeout: 15_000 });
    const after = await api<{ queue: { concurrency: number | null; rateLimit: unknown } }>(`{ queue(name: "limited") { concurrency rateLimit { perSecond } } }`);
    expect(after.data?.queue).toEqual({ concurrency: null, rateLimit: null });
  });

  it("saving a schedule's settings keeps a Disable made on the same page", async () => {
    const created = await api<{ createSchedule: { id: string } }>(
      `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`,
      { i: { name: "nightly-export", cron: "0 3 * * *", timezone: "UTC", task: { type: "export", queue: "default" } } },
    );
    const id = created.data!.createSchedule.id;
    scheduleId = id;
    await open(`/schedules/${id}`);
    await page.getByRole("button", { name: "Disable", exact: true }).click();
    await page.getByRole("dialog", { name: "Disable this schedule?" }).getByRole("button", { name: "Disable" }).click();
    await page.locator(".page-header").getByText("Disabled", { exact: true }).waitFor({ timeout: 15_000 });
    await page.getByLabel("Cron expression").fill("30 3 * * *");
    await page.getByRole("button", { name: "Save changes" }).click();
    await page.getByText(/^Saved\./).waitFor({ timeout: 15_000 });
    const after = await api<{ schedule: { cron: string; enabled: boolean } }>(`query ($id: ID!) { schedule(id: $id) { cron enabled } }`, { id });
    expect(after.data?.schedule).toEqual({ cron: "30 3 * * *", enabled: false });
  });

  it("keeps every input of a refused schedule form", async () => {
    await open("/schedules/new");
    await page.getByLabel("Name").fill("weekly-digest");
    await page.getByLabel("Cron expression").fill("0 8 * * 1");
    await page.getByLabel("When runs are missed").selectOption("CATCH_UP");
    await page.getByLabel("When runs overlap").selectOption("QUEUE");
    await page.getByLabel("Enabled").uncheck();
    await page.getByLabel("Task type").fill("send-digest");
    await page.getByLabel("Queue", { exact: true }).selectOption("billing");
    await page.getByLabel("Priority").selectOption("HIGH");
    await page.getByLabel("Max attempts").fill("4");
    await page.getByLabel("Payload (JSON)").fill('{"channel": ');
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.locator(".notice-error").getByText("The payload is not valid JSON.").waitFor({ timeout: 15_000 });
    expect({
      name: await page.getByLabel("Name").inputValue(),
      cron: await page.getByLabel("Cron expression").inputValue(),
      misfire: await page.getByLabel("When runs are missed").inputValue(),
      overlap: await page.getByLabel("When runs overlap").inputValue(),
      enabled: await page.getByLabel("Enabled").isChecked(),
      type: await page.getByLabel("Task type").inputValue(),
      queue: await page.getByLabel("Queue", { exact: true }).inputValue(),
      priority: await page.getByLabel("Priority").inputValue(),
      maxAttempts: await page.getByLabel("Max attempts").inputValue(),
      payload: await page.getByLabel("Payload (JSON)").inputValue(),
    }).toEqual({
      name: "weekly-digest",
      cron: "0 8 * * 1",
      misfire: "CATCH_UP",
      overlap: "QUEUE",
      enabled: false,
      type: "send-digest",
      queue: "billing",
      priority: "HIGH",
      maxAttempts: "4",
      payload: '{"channel": ',
    });
  });

  it("puts a duplicate schedule name's refusal on the Name field, as the queue form does", async () => {
    await open("/schedules/new");
    await page.getByLabel("Name").fill("nightly-export");
    await page.getByLabel("Cron expression").fill("0 4 * * *");
    await page.getByLabel("Task type").fill("export-again");
    await page.getByRole("button", { name: "Create schedule" }).click();
    await page.locator("#name-error").getByText('A schedule named "nightly-export" already exists').waitFor({ timeout: 15_000 });
    expect(await page.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    expect(page.url()).toBe(`${url}/schedules/new`);
    const named = await api<{ schedules: { name: string }[] }>(`{ schedules { name } }`);
    expect(named.data?.schedules.filter((s) => s.name === "nightly-export")).toHaveLength(1);
  });

  it("keeps the URL and event ticks of a refused webhook form", async () => {
    await open("/webhooks");
    await page.getByLabel("Endpoint URL").fill("ftp://example.com/hooks");
    await page.getByLabel("task.succeeded").check();
    await page.getByLabel("task.dead").uncheck();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.locator(".notice-error").waitFor({ timeout: 15_000 });
    expect(await page.getByLabel("Endpoint URL").inputValue()).toBe("ftp://example.com/hooks");
    expect(await page.getByLabel("task.succeeded").isChecked()).toBe(true);
    expect(await page.getByLabel("task.dead").isChecked()).toBe(false);
  });

  it("re-enables a webhook the platform disabled, keeping its secret, and disables it again", async () => {
    const created = await api<{ createWebhook: { webhook: { id: string } } }>(
      `mutation ($i: CreateWebhookInput!) { createWebhook(input: $i) { webhook { id } } }`,
      { i: { url: `${p.receiver.url}/gone-for-now`, events: ["task.dead"] } },
    );
    const id = created.data!.createWebhook.webhook.id;
    const secretBefore = (await p.tdb.db.pool.query<{ secret: string }>(`SELECT secret FROM webhooks WHERE id = $1`, [id])).rows[0]?.secret;
    // As the notifier leaves an endpoint after a 410 (a real one is in integration/realtime-webhooks).
    await p.tdb.db.pool.query(`UPDATE webhooks SET enabled = false, failure_streak = 1, disabled_reason = 'endpoint answered 410 Gone' WHERE id = $1`, [id]);
    const hook = async () =>
      (await api<{ webhooks: { id: string; enabled: boolean; disabledReason: string | null; failureStreak: number }[] }>(`{ webhooks { id enabled disabledReason failureStreak } }`)).data?.webhooks.find((w) => w.id === id);

    await open("/webhooks");
    const row = page.locator(`tr[data-webhook="${id}"]`);
    await row.getByText("endpoint answered 410 Gone").waitFor({ timeout: 15_000 });
    await row.getByRole("button", { name: "Enable", exact: true }).click();
    await page.getByRole("dialog", { name: "Enable this endpoint?" }).getByRole("button", { name: "Enable" }).click();
    await row.getByText("Enabled", { exact: true }).waitFor({ timeout: 15_000 });
    expect(await hook()).toEqual({ id, enabled: true, disabledReason: null, failureStreak: 0 });
    expect((await p.tdb.db.pool.query<{ secret: string }>(`SELECT secret FROM webhooks WHERE id = $1`, [id])).rows[0]?.secret).toBe(secretBefore);

    await row.getByRole("button", { name: "Disable", exact: true }).click();
    await page.getByRole("dialog", { name: "Disable this endpoint?" }).getByRole("button", { name: "Disable" }).click();
    await row.getByText("disabled by the tenant").waitFor({ timeout: 15_000 });
    expect(await hook()).toMatchObject({ enabled: false, disabledReason: "disabled by the tenant" });
  });

  it("pages the delivery log both ways and filters it by status, keeping the filter across pages", async () => {
    // Rows as the notifier leaves them (finished, so it never picks them up), a second apart, newest first by id too.
    const start = Date.now() - 3_600_000;
    for (let i = 0; i < 56; i++) {
      await p.tdb.db.pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, url, event, body, status, attempts, last_response_code, created_at, delivered_at)
         VALUES ($1, $2, 'http://127.0.0.1:9/callback', 'task.succeeded', '{}', $3, 1, $4, $5, $5)`,
        [newId(IdPrefix.delivery), p.tenant.tenantId, i % 8 === 0 ? "FAILED" : "DELIVERED", i % 8 === 0 ? 500 : 200, new Date(start + i * 1_000)],
      );
    }
    const ids = async (status?: string) =>
      (await api<{ webhookDeliveries: { id: string }[] }>(`query ($s: WebhookDeliveryStatus) { webhookDeliveries(first: 500, status: $s) { id } }`, { s: status ?? null })).data!.webhookDeliveries.map((d) => d.id);
    const every = await ids();
    expect(every.length).toBeGreaterThan(50);
    const log = page.locator('section[aria-labelledby="log"]');
    const shown = () => log.locator("tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-delivery-id")));

    await open("/webhooks");
    expect(await shown()).toEqual(every.slice(0, 50));
    await log.getByRole("link", { name: "Older →" }).click();
    await log.locator(".pagination").filter({ hasText: "Page 2" }).waitFor({ timeout: 15_000 });
    expect(await shown()).toEqual(every.slice(50, 100));
    expect(new URL(page.url()).searchParams.get("after")).toBe(every[49]);
    await log.getByRole("link", { name: "← Newer" }).click();
    await log.locator(".pagination").filter({ hasText: "Page 1" }).waitFor({ timeout: 15_000 });
    expect(await shown()).toEqual(every.slice(0, 50));

    const failed = await ids("FAILED");
    await log.getByLabel("Delivery status").selectOption("FAILED");
    await log.getByRole("button", { name: "Show" }).click();
    await page.waitForURL(/status=FAILED/, { timeout: 15_000 });
    await expect.poll(shown, { timeout: 15_000 }).toEqual(failed.slice(0, 50));
    expect(await log.getByLabel("Delivery status").inputValue()).toBe("FAILED");
    // An old link whose cursor is gone (the retention job pruned it): says so, and links to the newest.
    await open(`/webhooks?status=FAILED&after=${newId(IdPrefix.delivery)}`);
    await log.getByRole("link", { name: "Back to the newest" }).waitFor();
    expect(await log.getByLabel("Delivery status").inputValue()).toBe("FAILED");
  });

  it("keeps the name and scopes of a refused API key form", async () => {
    await open("/api-keys");
    await page.getByLabel("Name").fill("reporting");
    await page.getByRole("checkbox", { name: /^Submit/ }).uncheck();
    await page.getByRole("button", { name: "Create key" }).click();
    await page.locator(".notice-error").getByText("Choose at least one scope.").waitFor({ timeout: 15_000 });
    expect(await page.getByLabel("Name").inputValue()).toBe("reporting");

    // Refused by the API this time (a blank name), with two scopes ticked.
    await page.getByLabel("Name").fill("   ");
    await page.getByRole("checkbox", { name: /^Read/ }).check();
    await page.getByRole("checkbox", { name: /^Worker/ }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    await page.locator(".notice-error").filter({ hasNotText: "Choose at least one scope." }).waitFor({ timeout: 15_000 });
    expect(await page.getByLabel("Name").inputValue()).toBe("   ");
    expect(await page.getByRole("checkbox", { name: /^Read/ }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: /^Worker/ }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: /^Submit/ }).isChecked()).toBe(false);
  });

  it("lists a key the user named like a console session among the keys", async () => {
    const name = "console session nightly-export";
    await page.getByLabel("Name").fill(name);
    await page.getByRole("button", { name: "Create key" }).click();
    expect(await page.getByTestId("secret").textContent({ timeout: 15_000 })).toMatch(/^tl_/);
    await page.locator(`section[aria-labelledby="keys"] tr[data-key-name="${name}"]`).waitFor({ timeout: 15_000 });
    // The console sessions are this sign-in and the other context's (signed in above, never signed out).
    const sessions = page.locator('section[aria-labelledby="sessions"] tbody tr');
    expect(await sessions.evaluateAll((rows) => rows.map((r) => r.getAttribute("data-key-name")))).toEqual([`console session ${EMAIL}`, `console session ${EMAIL}`]);
    // A created key clears the form for the next one.
    expect(await page.getByLabel("Name").inputValue()).toBe("");
  });

  it("hydrates the dead letters without a mismatch, and clears the selection after a bulk action", async () => {
    p.behaviour.set("doomed", () => ({ status: 400 }));
    // c stays dead and unticked throughout, so the table (and its selection) stays on the page.
    const [a, b, c] = [await p.submit({ type: "doomed", maxAttempts: 1 }), await p.submit({ type: "doomed", maxAttempts: 1 }), await p.submit({ type: "doomed", maxAttempts: 1 })];
    for (const t of [a!, b!, c!]) await p.until(t.id, "DEAD");

    // Died a second or two ago ("1.6 s ago" on the server would read "1.9 s ago" when the browser
    // hydrates by its own clock); under a second both sides would say "just now".
    await page.waitForTimeout(1_200);
    const hydrationErrors: string[] = [];
    const onError = (error: Error) => hydrationErrors.push(error.message);
    const onConsole = (message: { type(): string; text(): string }) => {
      if (message.type() === "error") hydrationErrors.push(message.text());
    };
    page.on("pageerror", onError);
    page.on("console", onConsole);
    await open("/dead-letters");
    await page.locator(`tr[data-task-id="${c!.id}"]`).waitFor();
    await page.waitForTimeout(1_500);
    page.off("pageerror", onError);
    page.off("console", onConsole);
    expect(hydrationErrors.filter((m) => /418|hydrat/i.test(m))).toEqual([]);

    // Redrive both: they fail again and come back, and must not come back ticked.
    for (const t of [a!, b!]) await page.getByRole("checkbox", { name: `Select ${t.id}` }).check();
    await page.getByRole("button", { name: "Redrive selected" }).click();
    await page.getByRole("dialog", { name: "Redrive 2 tasks?" }).getByRole("button", { name: "Redrive 2 tasks" }).click();
    await page.getByText("Redrove 2 tasks.").waitFor({ timeout: 15_000 });
    await waitFor(
      "both tasks to die again",
      async () => {
        const res = await api<{ a: { status: string; attempts: number }; b: { status: string; attempts: number } }>(
          `query ($a: ID!, $b: ID!) { a: task(id: $a) { status attempts } b: task(id: $b) { status attempts } }`,
          { a: a!.id, b: b!.id },
        );
        return res.data?.a.status === "DEAD" && res.data.b.status === "DEAD";
      },
      45_000,
      200,
    );
    for (const t of [a!, b!]) await page.locator(`tr[data-task-id="${t.id}"]`).waitFor({ timeout: 15_000 });
    expect(await page.getByRole("checkbox", { name: `Select ${a!.id}` }).isChecked()).toBe(false);
    expect(await page.getByRole("checkbox", { name: `Select ${b!.id}` }).isChecked()).toBe(false);
    await page.getByText("Select tasks to act on them.").waitFor();

    // Discarding one ticked task discards that one only.
    await page.getByRole("checkbox", { name: `Select ${a!.id}` }).check();
    await page.getByRole("button", { name: "Discard selected" }).click();
    await page.getByRole("dialog", { name: "Discard 1 task?" }).getByRole("button", { name: "Discard 1 task" }).click();
    await p.until(a!.id, "CANCELLED");
    await page.locator(`tr[data-task-id="${a!.id}"]`).waitFor({ state: "detached", timeout: 15_000 });
    expect(await p.statusOf(b!.id)).toBe("DEAD");
    expect(await p.statusOf(c!.id)).toBe("DEAD");
  });

  it("applies a From date without Created set to Between, and says so", async () => {
    await open("/tasks");
    await page.locator("tbody tr").first().waitFor();
    await page.getByLabel("From (UTC)").fill(FUTURE);
    expect(await page.getByLabel("Created").inputValue()).toBe("custom");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByRole("heading", { name: "No tasks match these filters" }).waitFor({ timeout: 15_000 });
    expect(await page.getByLabel("Created").inputValue()).toBe("custom");
    expect(await page.getByLabel("From (UTC)").inputValue()).toBe(FUTURE);

    // A link carrying only a date means the same; choosing a preset range clears the dates.
    await open(`/tasks?from=${FUTURE}`);
    await page.getByRole("heading", { name: "No tasks match these filters" }).waitFor();
    expect(await page.getByLabel("Created").inputValue()).toBe("custom");
    await page.getByLabel("Created").selectOption("24h");
    expect(await page.getByLabel("From (UTC)").inputValue()).toBe("");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.locator("tbody tr").first().waitFor({ timeout: 15_000 });
  });

  it("pages through workflows both ways", async () => {
    for (let i = 0; i < 51; i++) {
      const res = await api(`mutation ($i: SubmitWorkflowInput!) { submitWorkflow(input: $i) { id } }`, {
        i: { name: `wf-${String(i).padStart(2, "0")}`, tasks: [{ key: "only", type: "noop", queue: "default" }] },
      });
      expect(res.errors).toBeUndefined();
    }
    await open("/workflows");
    const firstRow = () => page.locator("tbody tr").first().locator(".mono").textContent();
    const newest = await firstRow();
    expect(await page.locator("tbody tr").count()).toBe(50);
    await page.getByRole("link", { name: "Older →" }).click();
    await page.locator(".pagination").filter({ hasText: "Page 2" }).waitFor({ timeout: 15_000 });
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await page.getByRole("link", { name: "Older →" }).count()).toBe(0);
    await page.getByRole("link", { name: "← Newer" }).click();
    await page.locator(".pagination").filter({ hasText: "Page 1" }).waitFor({ timeout: 15_000 });
    expect(await firstRow()).toBe(newest);
  });

  it("fits a 390 px screen: no sideways scroll, no empty band, the current section in view", async () => {
    // A payload with one long unbroken value (a token, a base64 blob) scrolls inside its box, not the page.
    const task = await p.submit({ type: "narrow", queue: "default", payload: { blob: "QUJD".repeat(1_000) } });
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const pathname of ["/queues", "/api-keys", "/schedules", `/schedules/${scheduleId}`, "/webhooks", "/dead-letters", `/tasks/${task.id}`]) {
        await open(pathname);
        await page.locator("h1").first().waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollWidth), pathname).toBeLessThanOrEqual(390);
      }

      // An endpoint's URL stays readable (the table scrolls in its box), not a column of three characters.
      await open("/webhooks");
      const urlWidth = await page.locator("td.mono", { hasText: "gone-for-now" }).evaluate((cell) => cell.getBoundingClientRect().width);
      expect(urlWidth).toBeGreaterThan(120);

      // The last section's link is scrolled into the nav's view.
      await open("/usage");
      const inView = () =>
        page.evaluate(() => {
          const list = document.querySelector(".nav-list")!.getBoundingClientRect();
          const current = document.querySelector('.nav-link[aria-current="page"]')!.getBoundingClientRect();
          return current.left >= list.left - 1 && current.right <= list.right + 1;
        });
      await expect.poll(inView, { timeout: 10_000 }).toBe(true);

      // A page shorter than the screen: the nav is as tall as its links, the page fills the rest.
      await page.setViewportSize({ width: 390, height: 2_000 });
      await open("/usage");
      const band = await page.evaluate(() => {
        const sidebar = document.querySelector(".sidebar")!.getBoundingClientRect();
        const nav = document.querySelector(".sidebar nav")!.getBoundingClientRect();
        return sidebar.bottom - nav.bottom;
      });
      expect(band).toBeLessThan(24);
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 });
    }
  });

  it("stops on SIGTERM with exit 0, as every other app does (Next itself exits 143)", async () => {
    const another = await startConsole(p.gateway.url);
    expect(await another.stop()).toBe(0);
  });
});
