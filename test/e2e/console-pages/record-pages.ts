/**
 * The console's record pages (a task, queue, schedule, workflow) in Debian's
 * headless Chromium against the real platform: an unknown record is an HTTP
 * 404 with the "Not found" page (its h1), not a 200 whose stream turns into it (a
 * loading skeleton used to stream before the page could call notFound()).
 */
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInNewConsoleUser, type ConsolePlatform, type SharedConsolePlatform } from "../../helpers/console-platform.js";

const EMAIL = "linus@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;

/** The document's HTTP status and whether it shows the not-found page. */
async function visit(pathname: string): Promise<{ status: number | undefined; notFound: boolean }> {
  // "load", not "domcontentloaded": the page streams, and under a loaded suite the not-found
  // heading once arrived after the document's first part had been parsed (404, heading not yet there).
  const response = await page.goto(`${p.consoleApp.url}${pathname}`, { waitUntil: "load" });
  const heading = page.getByRole("heading", { name: "Not found", level: 1 });
  // A 404 document streams its not-found page: on a loaded machine "load" can still come before the
  // heading is in (one full run in three here). Wait for it then; a 200 page is read as it is.
  if (response?.status() === 404) await heading.waitFor({ timeout: 10_000 }).catch(() => undefined);
  return { status: response?.status(), notFound: (await heading.count()) > 0 };
}

/** The journey as a suite of its own tenant on a shared console platform (console-pages.test.ts). */
export function describeRecordPages(platform: () => SharedConsolePlatform): void {
  describe("console record pages", () => {
    beforeAll(async () => {
      p = await platform().session("Missing Things Ltd", { dailyTaskQuota: 1_000 });
      page = p.page;
    }, 180_000);

    afterAll(async () => {
      await p?.stop();
    });

    it("sign in", async () => {
      await signInNewConsoleUser(p, EMAIL, PASSWORD);
    });

    it("answer 404 with the not-found page for a record that does not exist", async () => {
      for (const pathname of [
        "/tasks/task_0190f0f0f0f07000800000000000000a",
        "/tasks/not-even-an-id",
        "/queues/nope",
        "/queues/has%20space",
        "/schedules/sch_0190f0f0f0f07000800000000000000a",
        "/workflows/wf_0190f0f0f0f07000800000000000000a",
        // An id or name edited into a broken percent-escape: no record has it (it was a 500).
        "/tasks/%E0%A4%A",
        "/queues/%",
        "/schedules/sch_%ZZ",
        "/workflows/%",
      ]) {
        expect(await visit(pathname), pathname).toEqual({ status: 404, notFound: true });
      }
    });

    it("answer 200 for records that exist and for the list pages", async () => {
      const submitted = await p.api<{ submitTask: { id: string } }>(`mutation { submitTask(input: { type: "here", queue: "default" }) { id } }`);
      const id = submitted.data!.submitTask.id;
      for (const pathname of [`/tasks/${id}`, "/queues/default", "/tasks", "/queues", "/"]) {
        expect(await visit(pathname), pathname).toEqual({ status: 200, notFound: false });
      }
      await p.open("/tasks");
      expect(await page.locator("main").textContent()).toContain("here");
    });
  });
}
