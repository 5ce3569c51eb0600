/**
 * The task page's "Run now" and "Reschedule" in Debian's headless Chromium
 * against the real platform (gateway, scheduler, worker, notifier, the built
 * console): a task delayed by an hour runs once "Run now" is confirmed; a
 * reschedule's time is read as UTC, as every console time, in a browser whose
 * zone is not UTC (Asia/Tokyo, +9 h); a finished task offers neither; a
 * task run now in a paused queue is said to wait for it; a refusal shows in
 * the form.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInNewConsoleUser, type ConsolePlatform, type SharedConsolePlatform } from "../../helpers/console-platform.js";

const EMAIL = "ren@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;

/** A datetime-local value for `at` in UTC, to the second. */
const utcInputValue = (at: Date) => at.toISOString().slice(0, 19);

/** The task page's "Run now", confirmed in its dialog. */
async function runNowFromItsPage(taskId: string): Promise<void> {
  await p.open(`/tasks/${taskId}`);
  await page.getByRole("button", { name: "Run now" }).click();
  const dialog = page.getByRole("dialog", { name: "Run this task now?" });
  await dialog.waitFor();
  await dialog.getByRole("button", { name: "Run now" }).click();
}

/** The journey as a suite of its own tenant on a shared console platform (console-pages.test.ts). */
export function describeTaskReschedule(platform: () => SharedConsolePlatform): void {
  describe("console task reschedule", () => {
    beforeAll(async () => {
      p = await platform().session("Reschedule Ltd", { dailyTaskQuota: 1_000 });
      page = p.page;
      // A browser away from UTC: read in its own zone, the input would move the time by 9 hours.
      await (await p.context.newCDPSession(page)).send("Emulation.setTimezoneOverride", { timezoneId: "Asia/Tokyo" });
      await signInNewConsoleUser(p, EMAIL, PASSWORD);
      const hooks = await p.api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "hooks", mode: "PUSH", endpointUrl: `${p.receiver.url}/tasks` } });
      if (hooks.errors) throw new Error(JSON.stringify(hooks.errors));
    }, 180_000);

    afterAll(async () => {
      await p?.stop();
    });

    it("runs a task delayed by an hour once Run now is confirmed", async () => {
      const task = await p.submit({ type: "later", delaySeconds: 3600 });
      await runNowFromItsPage(task.id);
      await page.getByText("Task due now: it runs as soon as a worker is free.").waitFor({ timeout: 30_000 });
      await p.until(task.id, "SUCCEEDED");
      expect(p.receiver.requests.some((r) => (r.json as { taskId?: string }).taskId === task.id)).toBe(true);
      // Its page shows it finished, with neither button.
      await p.open(`/tasks/${task.id}`);
      await page.getByTestId("task-status").getByText("SUCCEEDED").waitFor({ timeout: 15_000 });
      expect(await page.getByRole("button", { name: "Run now" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Reschedule" }).count()).toBe(0);
    });

    it("says a task run now waits for its paused queue", async () => {
      for (const [op, i] of [
        ["mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }", { i: { name: "held", mode: "PUSH", endpointUrl: `${p.receiver.url}/tasks` } }],
        ["mutation ($n: String!) { pauseQueue(name: $n) { paused } }", { n: "held" }],
      ] as const) {
        const res = await p.api(op, i);
        if (res.errors) throw new Error(JSON.stringify(res.errors));
      }
      const task = await p.submit({ queue: "held", type: "held", delaySeconds: 3600 });
      await runNowFromItsPage(task.id);
      await page.getByText("Task due now, but its queue is paused: it runs once the queue is resumed.").waitFor({ timeout: 30_000 });
      expect(await page.getByText("Task due now: it runs as soon as a worker is free.").count()).toBe(0);
      await p.until(task.id, "QUEUED");
    });

    it("reschedules to a time read as UTC, as the page shows times, in a browser whose zone is not UTC", async () => {
      const task = await p.submit({ type: "moved", delaySeconds: 3600 });
      const at = new Date(Math.floor((Date.now() + 2 * 3_600_000) / 1000) * 1000);
      await p.open(`/tasks/${task.id}`);
      await page.getByRole("button", { name: "Reschedule" }).click();
      const dialog = page.getByRole("dialog", { name: "Reschedule this task" });
      await dialog.waitFor();
      expect(await page.evaluate(() => new Date(0).getTimezoneOffset())).toBe(-540);
      const input = dialog.getByLabel("Run at (UTC)");
      // It starts at the task's runAt as the page shows it, to the second (Chromium leaves ":00" seconds off the value).
      const runAt = (await p.tdb.db.pool.query<{ run_at: Date }>("SELECT run_at FROM tasks WHERE id = $1", [task.id])).rows[0]!.run_at;
      expect(new Date(`${await input.inputValue()}Z`).toISOString()).toBe(`${runAt.toISOString().slice(0, 19)}.000Z`);
      await input.fill(utcInputValue(at));
      await dialog.getByRole("button", { name: "Reschedule" }).click();
      await page.getByText("Task rescheduled: it runs at its new time.").waitFor({ timeout: 30_000 });
      const stored = await p.tdb.db.pool.query<{ run_at: Date; status: string }>("SELECT run_at, status FROM tasks WHERE id = $1", [task.id]);
      expect(stored.rows[0]).toEqual({ run_at: at, status: "SCHEDULED" });
    });

    it("shows the API's refusal in the form", async () => {
      const task = await p.submit({ type: "too-far", delaySeconds: 3600 });
      await p.open(`/tasks/${task.id}`);
      await page.getByRole("button", { name: "Reschedule" }).click();
      const dialog = page.getByRole("dialog", { name: "Reschedule this task" });
      await dialog.getByLabel("Run at (UTC)").fill(utcInputValue(new Date(Date.now() + 400 * 86_400_000)));
      await dialog.getByRole("button", { name: "Reschedule" }).click();
      await dialog.getByRole("alert").getByText(/must not be more than/).waitFor({ timeout: 30_000 });
      expect(await p.statusOf(task.id)).toBe("SCHEDULED");
    });
  });
}
