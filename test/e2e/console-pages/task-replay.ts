/**
 * The task page's "Replay" in Debian's headless Chromium against the real
 * platform (gateway, scheduler, worker, notifier, the built console): a
 * SUCCEEDED task is replayed behind a confirmation, the browser lands on the
 * new task's page, which says "Replay of" with a link back to the original;
 * the endpoint gets the same payload again. An unfinished task offers no Replay.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInNewConsoleUser, type ConsolePlatform, type SharedConsolePlatform } from "../../helpers/console-platform.js";

const EMAIL = "lin@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;

/** The journey as a suite of its own tenant on a shared console platform (console-pages.test.ts). */
export function describeTaskReplay(platform: () => SharedConsolePlatform): void {
  describe("console task replay", () => {
    beforeAll(async () => {
      p = await platform().session("Replay Ltd", { dailyTaskQuota: 1_000 });
      page = p.page;
      const hooks = await p.api(`mutation ($i: UpsertQueueInput!) { upsertQueue(input: $i) { name } }`, { i: { name: "hooks", mode: "PUSH", endpointUrl: `${p.receiver.url}/tasks` } });
      if (hooks.errors) throw new Error(JSON.stringify(hooks.errors));
      await signInNewConsoleUser(p, EMAIL, PASSWORD);
    }, 180_000);

    afterAll(async () => {
      await p?.stop();
    });

    it("offers no Replay on an unfinished task", async () => {
      const waiting = await p.submit({ type: "later", delaySeconds: 3600 });
      await p.open(`/tasks/${waiting.id}`);
      await page.getByRole("button", { name: "Cancel task" }).waitFor();
      expect(await page.getByRole("button", { name: "Replay", exact: true }).count()).toBe(0);
      expect(await page.getByTestId("replay-of").count()).toBe(0);
    });

    it("replays a SUCCEEDED task: the new task's page opens and links back to the original", async () => {
      const original = await p.submit({ type: "invoice", payload: { invoice: 17 } });
      await p.until(original.id, "SUCCEEDED");
      await p.open(`/tasks/${original.id}`);
      await page.getByRole("button", { name: "Replay", exact: true }).click();
      const dialog = page.getByRole("dialog", { name: "Replay this task?" });
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Replay", exact: true }).click();

      // The browser lands on the new task's page.
      await page.waitForURL((url) => /\/tasks\/task_/.test(url.pathname) && !url.pathname.endsWith(original.id), { timeout: 30_000 });
      const replayId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
      const link = page.getByTestId("replay-of").getByRole("link", { name: original.id });
      await link.waitFor({ timeout: 15_000 });
      const stored = await p.tdb.db.pool.query<{ replay_of: string; payload: unknown }>("SELECT replay_of, payload FROM tasks WHERE id = $1", [replayId]);
      expect(stored.rows[0]).toEqual({ replay_of: original.id, payload: { invoice: 17 } });
      await p.until(replayId, "SUCCEEDED");
      const pushed = p.receiver.requests.filter((r) => (r.json as { type?: string }).type === "invoice").map((r) => r.json as { taskId: string; payload: unknown });
      expect(pushed.map((r) => [r.taskId, r.payload])).toEqual([
        [original.id, { invoice: 17 }],
        [replayId, { invoice: 17 }],
      ]);

      // The link goes back to the original, which is no replay itself.
      await link.click();
      await page.waitForURL((url) => url.pathname.endsWith(`/tasks/${original.id}`), { timeout: 30_000 });
      await page.getByRole("button", { name: "Replay", exact: true }).waitFor();
      expect(await page.getByTestId("replay-of").count()).toBe(0);
    });
  });
}
