import { describe, expect, it } from "vitest";
import { createWebhookInputSchema, webhookDeliveriesFirstSchema } from "./webhook.js";

describe("createWebhookInputSchema", () => {
  it("accepts known event types and '*', deduplicated and sorted", () => {
    const parsed = createWebhookInputSchema.parse({ url: "https://example.com/h", events: ["task.succeeded", "task.dead", "task.succeeded"] });
    expect(parsed.events).toEqual(["task.dead", "task.succeeded"]);
    expect(createWebhookInputSchema.parse({ url: "https://example.com/h", events: ["*"] }).events).toEqual(["*"]);
    expect(createWebhookInputSchema.parse({ url: "http://example.com/h", events: ["workflow.completed"] }).events).toEqual(["workflow.completed"]);
  });

  it("refuses an empty filter, unknown types and non-http URLs", () => {
    const bad = [
      { url: "https://example.com/h", events: [] },
      { url: "https://example.com/h", events: ["task.started"] },
      { url: "https://example.com/h", events: ["TASK.SUCCEEDED"] },
      { url: "ftp://example.com/h", events: ["*"] },
      { url: "not a url", events: ["*"] },
    ];
    for (const input of bad) expect(createWebhookInputSchema.safeParse(input).success).toBe(false);
  });
});

describe("webhookDeliveriesFirstSchema", () => {
  it("defaults to 20 and stays within a page", () => {
    expect(webhookDeliveriesFirstSchema.parse(null)).toBe(20);
    expect(webhookDeliveriesFirstSchema.parse(5)).toBe(5);
    expect(webhookDeliveriesFirstSchema.safeParse(0).success).toBe(false);
    expect(webhookDeliveriesFirstSchema.safeParse(501).success).toBe(false);
  });
});
