/**
 * The dead-letter page's "Redrive all" and "Discard all" in Debian's headless
 * Chromium against the real platform (gateway, scheduler, worker, notifier,
 * the built console): a confirmation naming the count, 1,000 tasks a step
 * with the progress shown, a stop at the first refusal that says so, and the
 * list refreshed at the end. The tests run in order, like a person's session.
 */
import { IdPrefix, newId } from "@tasklane/core";
import type { Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createConsoleUser, type ConsolePlatform, type SharedConsolePlatform } from "../../helpers/console-platform.js";

const EMAIL = "ada@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;

/** `n` DEAD tasks of `queue` written straight into the table, died an hour ago, one millisecond apart. */
async function seedDead(queue: string, n: number): Promise<string[]> {
  const pool = p.tdb.db.pool;
  const q = await pool.query<{ id: string }>("SELECT id FROM queues WHERE tenant_id = $1 AND name = $2", [p.tenant.tenantId, queue]);
  const ids = Array.from({ length: n }, () => newId(IdPrefix.task));
  await pool.query(
    `INSERT INTO tasks (id, tenant_id, queue_id, type, status, run_at, created_at, completed_at, attempts, max_attempts, last_error,
                        backoff_strategy, backoff_delay_seconds, backoff_jitter, timeout_seconds)
     SELECT id, $2, $3, 'outage', 'DEAD', now() - interval '2 hours', now() - interval '2 hours', now() - interval '1 hour' + ord * interval '1 millisecond',
            3, 3, 'HTTP 503: down', 'EXPONENTIAL', 1, true, 60
       FROM unnest($1::text[]) WITH ORDINALITY AS u(id, ord)`,
    [ids, p.tenant.tenantId, q.rows[0]!.id],
  );
  return ids;
}

const statuses = async (ids: string[]) =>
  Object.fromEntries(
    (await p.tdb.db.pool.query<{ status: string; n: number }>("SELECT status, count(*)::int AS n FROM tasks WHERE id = ANY($1) GROUP BY status", [ids])).rows.map((r) => [r.status, r.n]),
  );

const progress = () => page.getByTestId("dead-letter-bulk-progress");

/** Every text the progress line showed from now on (a MutationObserver in the page). */
async function recordProgress(): Promise<() => Promise<string[]>> {
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { __progress: string[] }).__progress = seen;
    const observer = new MutationObserver(() => {
      const text = document.querySelector('[data-testid="dead-letter-bulk-progress"]')?.textContent ?? null;
      if (text !== null && seen[seen.length - 1] !== text) seen.push(text);
    });
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return () => page.evaluate(() => (window as unknown as { __progress: string[] }).__progress);
}

/** The journey as a suite of its own tenant on a shared console platform (console-pages.test.ts). */
export function describeDeadLetterBulk(platform: () => SharedConsolePlatform): void {
  describe("console: redrive all and discard all on the dead-letter page", () => {
    beforeAll(async () => {
      p = await platform().session("Outage Ltd", { dailyTaskQuota: 100_000, maxPendingTasks: 50_000, maxConcurrency: 50 });
      page = p.page;
      await createConsoleUser(p, EMAIL, PASSWORD);
      const hooks = await p.api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "hooks", mode: "PUSH", endpointUrl: `${p.receiver.url}/tasks` } });
      expect(hooks.errors).toBeUndefined();
      await page.goto(`${p.consoleApp.url}/signin`);
      await page.getByLabel("Email").fill(EMAIL);
      await page.getByLabel("Password").fill(PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL((u) => !u.pathname.startsWith("/signin"));
    }, 180_000);

    afterAll(async () => {
      await p?.stop();
    });

    const seeded: string[] = [];

    it("stops at the first refusal, saying how far it got and why", async () => {
      seeded.push(...(await seedDead("default", 2_500)));
      await p.open("/dead-letters?queue=default");
      await page.getByText("2,500 dead tasks in default.").waitFor();
      await page.getByRole("button", { name: "Redrive all" }).click();
      const dialog = page.getByRole("dialog", { name: "Redrive all 2,500 dead tasks in default?" });
      await dialog.waitFor();

      // The second step finds the gateway gone: its call is let through only once the gateway is down.
      let steps = 0;
      let restart: (() => Promise<void>) | undefined;
      const handler = async (route: Route) => {
        const request = route.request();
        if (request.method() === "POST" && request.headers()["next-action"] !== undefined) {
          steps += 1;
          if (steps === 2) restart = await p.stopGateway();
        }
        await route.continue();
      };
      await page.route("**/dead-letters**", handler);
      try {
        await dialog.getByRole("button", { name: "Redrive 2,500 dead tasks" }).click();
        await page.getByRole("alert").filter({ hasText: "Redriven 1,000 of 2,500. Stopped: The Tasklane API could not be reached" }).waitFor({ timeout: 30_000 });
      } finally {
        await page.unroute("**/dead-letters**", handler);
        await restart?.();
      }
      expect(steps).toBe(2);
      // The 1,000 that died first went back to the queue; nothing else moved.
      expect(await statuses(seeded.slice(0, 1_000))).toEqual({ QUEUED: 1_000 });
      expect(await statuses(seeded.slice(1_000))).toEqual({ DEAD: 1_500 });
    });

    it("redrives the rest 1,000 at a time, showing the progress, and refreshes the list at the end", async () => {
      await p.open("/dead-letters?queue=default");
      await page.getByText("1,500 dead tasks in default.").waitFor();
      const seen = await recordProgress();
      await page.getByRole("button", { name: "Redrive all" }).click();
      await page.getByRole("dialog", { name: "Redrive all 1,500 dead tasks in default?" }).getByRole("button", { name: "Redrive 1,500 dead tasks" }).click();
      await progress().filter({ hasText: "Redriven 1,500 of 1,500." }).waitFor({ timeout: 30_000 });
      await page.getByRole("heading", { name: "No dead letters" }).waitFor({ timeout: 15_000 });
      expect(await seen()).toEqual(["Redriven 0 of 1,500…", "Redriven 1,000 of 1,500…", "Redriven 1,500 of 1,500."]);
      expect(await statuses(seeded)).toEqual({ QUEUED: 2_500 });
      const events = await p.tdb.db.pool.query<{ n: number; tasks: number }>(
        "SELECT count(*)::int AS n, count(DISTINCT task_id)::int AS tasks FROM task_events WHERE task_id = ANY($1) AND reason = 'redrive'",
        [seeded],
      );
      expect(events.rows[0]).toEqual({ n: 2_500, tasks: 2_500 });
    });

    it("redrives every queue's dead tasks, and the PUSH ones run again", async () => {
      const hooks = await seedDead("hooks", 20);
      await p.open("/dead-letters");
      await page.getByText("20 dead tasks in every queue.").waitFor();
      await page.getByRole("button", { name: "Redrive all" }).click();
      await page.getByRole("dialog", { name: "Redrive all 20 dead tasks in every queue?" }).getByRole("button", { name: "Redrive 20 dead tasks" }).click();
      await progress().filter({ hasText: "Redriven 20 of 20." }).waitFor({ timeout: 30_000 });
      for (const id of hooks) await p.until(id, "SUCCEEDED");
    });

    it("discards all after asking, and the list empties", async () => {
      const doomed = await seedDead("default", 1_200);
      await p.open("/dead-letters");
      await page.getByText("1,200 dead tasks in every queue.").waitFor();
      await page.getByRole("button", { name: "Discard all" }).click();
      const dialog = page.getByRole("dialog", { name: "Discard all 1,200 dead tasks in every queue?" });
      // Cancel changes nothing.
      await dialog.getByRole("button", { name: "Cancel" }).click();
      expect(await statuses(doomed)).toEqual({ DEAD: 1_200 });
      await page.getByRole("button", { name: "Discard all" }).click();
      await dialog.getByRole("button", { name: "Discard 1,200 dead tasks" }).click();
      await progress().filter({ hasText: "Discarded 1,200 of 1,200." }).waitFor({ timeout: 30_000 });
      await page.getByRole("heading", { name: "No dead letters" }).waitFor({ timeout: 15_000 });
      expect(await statuses(doomed)).toEqual({ CANCELLED: 1_200 });
    });
  });
}
