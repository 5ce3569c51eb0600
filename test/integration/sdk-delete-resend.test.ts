/**
 * The SDK's deletes are sent again after a lost answer (they are idempotent):
 * the repeat finds the object gone, NOT_FOUND, which is the outcome the caller
 * asked for, so the call answers true as the lost attempt would have. Against
 * the real gateway (in process, real Postgres and Redis).
 */
import { TasklaneClient, type FetchLike } from "@tasklane/sdk";
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant } from "../helpers/platform.js";
import { sdkRejection as rejection } from "../helpers/sdk-calls.js";

/** Loses the answer of the first request whose query matches (after the gateway ran it); later ones arrive. */
function losingFirstAnswer(operation: RegExp): { fetch: FetchLike; sent: () => number } {
  let sent = 0;
  const fetchLike: FetchLike = async (input, init) => {
    const res = await fetch(input, init);
    if (!operation.test((JSON.parse(String(init.body)) as { query: string }).query)) return res;
    sent += 1;
    if (sent > 1) return res;
    await res.text();
    throw new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) });
  };
  return { fetch: fetchLike, sent: () => sent };
}

describe("SDK: a delete whose answer was lost", () => {
  const platform = useGateway();

  it("answers true for a queue, a schedule and a webhook the lost attempt deleted", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const plain = new TasklaneClient({ url: platform.gateway.url, apiKey });
    await plain.queues.upsert({ name: "doomed", mode: "PULL" });
    const schedule = await plain.schedules.create({ name: "doomed", cron: "0 3 * * *", task: { type: "t" } });
    const { webhook } = await plain.webhooks.create({ url: "https://93.184.216.34/hooks", events: ["*"] });

    const cases = [
      { doc: /^\s*mutation DeleteQueue\b/, del: (c: TasklaneClient) => c.queues.delete("doomed") },
      { doc: /^\s*mutation DeleteSchedule\b/, del: (c: TasklaneClient) => c.schedules.delete(schedule.id) },
      { doc: /^\s*mutation DeleteWebhook\b/, del: (c: TasklaneClient) => c.webhooks.delete(webhook.id) },
    ];
    for (const { doc, del } of cases) {
      const losing = losingFirstAnswer(doc);
      const client = new TasklaneClient({ url: platform.gateway.url, apiKey, fetch: losing.fetch, retry: { attempts: 3, baseDelayMs: 10 } });
      expect(await del(client)).toBe(true);
      // The lost attempt deleted it; the repeat met NOT_FOUND.
      expect(losing.sent()).toBe(2);
    }
    expect((await plain.queues.list()).map((q) => q.name)).toEqual(["default"]);
    expect(await plain.schedules.get(schedule.id)).toBeNull();
    expect(await plain.webhooks.list()).toEqual([]);

    // Without a lost answer, a delete of something that is not there is NOT_FOUND as before.
    expect((await rejection(plain.queues.delete("doomed"))).code).toBe("NOT_FOUND");
    expect((await rejection(plain.webhooks.delete(webhook.id))).code).toBe("NOT_FOUND");
  });
});
