import { describe, expect, it } from "vitest";
import { createWebhookInputSchema, updateWebhookInputSchema, webhookDeliveriesFirstSchema } from "./webhook.js";

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
      { url: " https://example.com/h", events: ["*"] },
      { url: "https://example.com/h\n", events: ["*"] },
    ];
    for (const input of bad) expect(createWebhookInputSchema.safeParse(input).success).toBe(false);
  });
});

describe("updateWebhookInputSchema", () => {
  it("leaves out what is null or omitted, and checks what is given as createWebhook does", () => {
    expect(updateWebhookInputSchema.parse({})).toEqual({});
    expect(updateWebhookInputSchema.parse({ url: null, events: null, enabled: null })).toEqual({ url: null, events: null, enabled: null });
    expect(updateWebhookInputSchema.parse({ enabled: true, events: ["task.succeeded", "*", "task.succeeded"] })).toEqual({ enabled: true, events: ["*", "task.succeeded"] });
    for (const input of [{ events: [] }, { events: ["task.started"] }, { url: "ftp://example.com/h" }, { url: "" }, { url: "https://example.com/h " }, { enabled: "yes" }]) {
      expect(updateWebhookInputSchema.safeParse(input).success, JSON.stringify(input)).toBe(false);
    }
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
