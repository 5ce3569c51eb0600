/**
 * The contract's input types as the compiler sees them (tsconfig.test.json checks this
 * file; the assertions at run time only keep vitest company).
 */
import { describe, expect, it } from "vitest";
import type { UpsertQueueInput } from "./types.js";

const upsertInput = (input: UpsertQueueInput) => input;

describe("UpsertQueueInput", () => {
  it("updates an existing PUSH queue without repeating its endpointUrl, and gives a PULL queue none", () => {
    // The gateway keeps an existing PUSH queue's endpoint when it is omitted (pausing it, say).
    expect(upsertInput({ name: "hooks", mode: "PUSH", paused: true }).mode).toBe("PUSH");
    expect(upsertInput({ name: "hooks", mode: "PUSH", endpointUrl: "https://example.com/tasks" }).endpointUrl).toBe("https://example.com/tasks");
    // @ts-expect-error a PULL queue has no endpoint
    expect(upsertInput({ name: "jobs", mode: "PULL", endpointUrl: "https://example.com/tasks" }).mode).toBe("PULL");
  });
});
