/**
 * The console's webhooks page rotates an endpoint's signing secret behind a
 * confirmation that says the old one keeps signing for 24 h, shows the new
 * secret once with a copy button (as after creation), and the delivery log
 * says when a PENDING delivery is tried next. Debian's headless Chromium
 * against the real platform (console-platform.ts).
 */
import { IdPrefix, newId } from "@tasklane/core";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signInNewConsoleUser, type ConsolePlatform, type SharedConsolePlatform } from "../../helpers/console-platform.js";

const EMAIL = "margaret@example.com";
const PASSWORD = "a password long enough";

let p: ConsolePlatform;
let page: Page;
let webhookId = "";
let firstSecret = "";

const secrets = async () =>
  (await p.tdb.db.pool.query<{ secret: string; previous_secret: string | null }>("SELECT secret, previous_secret FROM webhooks WHERE id = $1", [webhookId])).rows[0];

/** The journey as a suite of its own tenant on a shared console platform (console-pages.test.ts). */
export function describeWebhookRotation(platform: () => SharedConsolePlatform): void {
  describe("console webhook secret rotation", () => {
    beforeAll(async () => {
      p = await platform().session("Rotation Ltd", { dailyTaskQuota: 1_000 });
      page = p.page;
      const created = await p.api<{ createWebhook: { webhook: { id: string }; secret: string } }>(
        `mutation ($u: String!) { createWebhook(input: { url: $u, events: ["*"] }) { webhook { id } secret } }`,
        { u: `${p.receiver.url}/hooks` },
      );
      if (!created.data) throw new Error(JSON.stringify(created.errors));
      webhookId = created.data.createWebhook.webhook.id;
      firstSecret = created.data.createWebhook.secret;
      await p.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: p.consoleApp.url });
    }, 180_000);

    afterAll(async () => {
      await p?.stop();
    });

    it("sign in", async () => {
      await signInNewConsoleUser(p, EMAIL, PASSWORD, { path: "/webhooks", heading: "Webhooks" });
    });

    it("asks first, saying the old secret keeps signing for 24 h; cancelled, nothing changes", async () => {
      await p.open("/webhooks");
      const row = page.locator(`tr[data-webhook="${webhookId}"]`);
      await row.getByRole("button", { name: "Rotate secret" }).click();
      const dialog = page.getByRole("dialog", { name: "Rotate this endpoint's signing secret?" });
      await dialog.waitFor();
      expect(await dialog.textContent()).toContain("keeps signing beside it for 24 h");
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden" });
      expect(await secrets()).toEqual({ secret: firstSecret, previous_secret: null });
    });

    it("rotates on confirmation and shows the new secret once, with a copy button", async () => {
      const row = page.locator(`tr[data-webhook="${webhookId}"]`);
      await row.getByRole("button", { name: "Rotate secret" }).click();
      await page.getByRole("dialog", { name: "Rotate this endpoint's signing secret?" }).getByRole("button", { name: "Rotate secret" }).click();
      const shown = (await row.getByTestId("secret").textContent({ timeout: 15_000 })) ?? "";
      expect(shown).toMatch(/^whsec_/);
      expect(shown).not.toBe(firstSecret);
      // The API rotated once: the new secret signs, the created one beside it.
      expect(await secrets()).toEqual({ secret: shown, previous_secret: firstSecret });
      expect(await row.textContent()).toContain("the previous one also signs for 24 h");
      await row.getByRole("button", { name: "Copy" }).click();
      await row.getByRole("button", { name: "Copied" }).waitFor({ timeout: 5_000 });
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(shown);
      // The row says the replaced secret still signs (previousSecretExpiresAt, about a day ahead).
      await expect.poll(async () => row.locator("td").nth(2).textContent(), { timeout: 15_000 }).toMatch(/Previous secret also signs, ends in (23|24) h/);

      // Shown once: after a reload only the note about the previous secret is left.
      await p.open("/webhooks");
      await row.getByRole("button", { name: "Rotate secret" }).waitFor();
      expect(await page.getByTestId("secret").count()).toBe(0);
      expect(await row.textContent()).toMatch(/Previous secret also signs, ends in (23|24) h/);
    });

    it("the delivery log says when a PENDING delivery is tried next, and nothing for finished ones", async () => {
      // Rows as the notifier leaves them: one waiting 10 min for its retry (so the notifier leaves it), one delivered.
      const [pending, delivered] = [newId(IdPrefix.delivery), newId(IdPrefix.delivery)];
      await p.tdb.db.pool.query(
        `INSERT INTO webhook_deliveries (id, tenant_id, webhook_id, url, event, body, status, attempts, last_response_code, next_attempt_at, created_at, delivered_at)
         VALUES ($1, $3, $4, $5, 'task.dead', '{}', 'PENDING', 1, 500, now() + interval '10 minutes', now() - interval '2 seconds', NULL),
                ($2, $3, $4, $5, 'task.dead', '{}', 'DELIVERED', 1, 204, now(), now() - interval '1 second', now())`,
        [pending, delivered, p.tenant.tenantId, webhookId, `${p.receiver.url}/hooks`],
      );
      await p.open("/webhooks");
      const waiting = page.locator(`tr[data-delivery-id="${pending}"]`);
      expect(await waiting.locator("td").nth(3).textContent()).toMatch(/next attempt in (9|10) min/);
      expect(await waiting.locator("time").first().getAttribute("datetime")).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(await page.locator(`tr[data-delivery-id="${delivered}"]`).textContent()).not.toContain("next attempt");
    });
  });
}
