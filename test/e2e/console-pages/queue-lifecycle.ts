/**
 * The console's queue page purges and deletes a queue, each behind a
 * confirmation, in Debian's headless Chromium against the real platform: a
 * delete the API refuses (unfinished tasks: CONFLICT) shows why beside the
 * button; after a purge and the running task's end the delete goes through
 * and the list says so. The default queue offers no delete.
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInNewConsoleUser, type ConsolePlatform, type SharedConsolePlatform } from "../../helpers/console-platform.js";

const EMAIL = "grace@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;
let runningToken = "";
let runningId = "";

const countOf = async (status: string) =>
  (await p.api<{ tasks: { totalCount: number } }>(`query ($s: [TaskStatus!]) { tasks(filter: { queue: "bulk", status: $s }) { totalCount } }`, { s: [status] })).data?.tasks
    .totalCount;

/** The journey as a suite of its own tenant on a shared console platform (console-pages.test.ts). */
export function describeQueueLifecycle(platform: () => SharedConsolePlatform): void {
  describe("console queue lifecycle", () => {
    beforeAll(async () => {
      p = await platform().session("Lifecycle Ltd", { dailyTaskQuota: 1_000 });
      page = p.page;
      const created = await p.api(`mutation { upsertQueue(input: { name: "bulk", mode: PULL }) { name } }`);
      if (created.errors) throw new Error(JSON.stringify(created.errors));
      const first = await p.api<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "first", queue: "bulk", priority: HIGH }) { id } }`);
      runningId = first.data!.submitTask.id;
      const leased = await p.api<{ leaseTasks: { leaseToken: string }[] }>(`mutation { leaseTasks(queue: "bulk", workerId: "e2e", max: 1) { leaseToken } }`);
      runningToken = leased.data!.leaseTasks[0]!.leaseToken;
      const rest = await p.api(`mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`, {
        i: Array.from({ length: 29 }, (_, n) => ({ type: "waiting", queue: "bulk", ...(n % 3 === 0 ? { delaySeconds: 3600 } : {}) })),
      });
      if (rest.errors) throw new Error(JSON.stringify(rest.errors));
    }, 180_000);

    afterAll(async () => {
      await p?.stop();
    });

    it("sign in", async () => {
      await signInNewConsoleUser(p, EMAIL, PASSWORD, { path: "/queues", heading: "Queues" });
    });

    it("shows the API's refusal when a queue with unfinished tasks is deleted, and deletes nothing", async () => {
      await p.open("/queues/bulk");
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      const dialog = page.getByRole("dialog", { name: "Delete bulk?" });
      await dialog.waitFor();
      await dialog.getByRole("button", { name: "Delete queue" }).click();
      const alert = page.getByRole("alert").filter({ hasText: "unfinished tasks" });
      await alert.waitFor({ timeout: 15_000 });
      expect(await alert.textContent()).toContain("purgeQueue");
      expect(await countOf("QUEUED")).toBe(19);
    });

    it("purges after confirmation: the waiting tasks are cancelled, the running one stays", async () => {
      await p.open("/queues/bulk");
      await page.getByRole("button", { name: "Purge", exact: true }).click();
      const dialog = page.getByRole("dialog", { name: "Purge bulk?" });
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain("Running tasks finish");
      await dialog.getByRole("button", { name: "Purge", exact: true }).click();
      await page.getByRole("status").filter({ hasText: "Purged" }).waitFor({ timeout: 15_000 });
      expect(await page.getByRole("status").filter({ hasText: "Purged" }).textContent()).toContain("1 running task will finish");
      expect(await countOf("CANCELLED")).toBe(29);
      expect(await countOf("RUNNING")).toBe(1);
    });

    it("deletes the queue once nothing is left to run, and the list says so", async () => {
      const done = await p.api(`mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t) { status } }`, { id: runningId, t: runningToken });
      expect(done.errors).toBeUndefined();
      await p.open("/queues/bulk");
      await page.getByRole("button", { name: "Delete", exact: true }).click();
      await page.getByRole("dialog", { name: "Delete bulk?" }).getByRole("button", { name: "Delete queue" }).click();
      await page.waitForURL(/\/queues\?deleted=bulk/, { timeout: 15_000 });
      await page.getByText("deleted.").waitFor();
      expect(await page.locator("main").textContent()).toContain("Queue bulk deleted.");
      const gone = await p.api<{ queue: unknown }>(`{ queue(name: "bulk") { name } }`);
      expect(gone.data?.queue).toBeNull();
    });

    it("offers no delete for the default queue", async () => {
      await p.open("/queues/default");
      await page.getByRole("button", { name: "Purge", exact: true }).waitFor();
      expect(await page.getByRole("button", { name: "Delete", exact: true }).count()).toBe(0);
    });
  });
}
