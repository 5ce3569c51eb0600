import { describe, expect, it } from "vitest";
import { doorbellMessage, parseDoorbell } from "./doorbell.js";

describe("doorbell messages", () => {
  it("carries the queue name alone when some job is due now", () => {
    expect(doorbellMessage({ queueName: "{ten_a}.que_b", dueAt: null })).toBe("{ten_a}.que_b");
    expect(parseDoorbell("{ten_a}.que_b")).toEqual({ queueName: "{ten_a}.que_b", dueAt: null });
  });

  it("carries the earliest due time when every job is delayed, and reads it back", () => {
    const message = doorbellMessage({ queueName: "{ten_a}.que_b", dueAt: 1_764_900_000_123 });
    expect(message).toBe("{ten_a}.que_b 1764900000123");
    expect(parseDoorbell(message)).toEqual({ queueName: "{ten_a}.que_b", dueAt: 1_764_900_000_123 });
  });

  it("rings as due now when the due time does not parse", () => {
    expect(parseDoorbell("{ten_a}.que_b soon")).toEqual({ queueName: "{ten_a}.que_b", dueAt: null });
  });
});
