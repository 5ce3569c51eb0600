import { NotFoundError } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { isQueueGone, queueGoneAsNotFound } from "./queue-gone.js";

const fkError = (constraint: string) => Object.assign(new Error("insert or update on table violates foreign key constraint"), { code: "23503", constraint });

describe("queueGoneAsNotFound", () => {
  it("answers the task -> queue key's violation as NOT_FOUND, naming the one queue the inserts name", async () => {
    const refused = await queueGoneAsNotFound(() => Promise.reject(fkError("tasks_tenant_id_queue_id_fkey")), () => ["emails", "emails"]).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(NotFoundError);
    expect((refused as NotFoundError).message).toBe('Queue "emails" not found');
    const several = await queueGoneAsNotFound(() => Promise.reject(fkError("tasks_tenant_id_queue_id_fkey")), () => ["a", "b"]).catch((e: unknown) => e);
    expect((several as NotFoundError).message).toBe("Queue not found");
  });

  it("lets every other error through unchanged", async () => {
    const other = fkError("some_other_fkey");
    expect(isQueueGone(other)).toBe(false);
    await expect(queueGoneAsNotFound(() => Promise.reject(other), () => ["a"])).rejects.toBe(other);
    expect(await queueGoneAsNotFound(() => Promise.resolve(7), () => ["a"])).toBe(7);
  });
});
