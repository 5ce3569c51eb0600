import type { TaskRecord } from "@tasklane/db";
import { describe, expect, it } from "vitest";
import { chunkedTaskLoads } from "./chunked-task-loads.js";

/** A reader of tasks t0 … t9 (t7 is gone) that records each read's ids. */
function recordedReads() {
  const reads: string[][] = [];
  const read = async (tenantId: string, ids: readonly string[]) => {
    reads.push([tenantId, ...ids]);
    return new Map(ids.filter((id) => id !== "t7").map((id) => [id, { id, status: "QUEUED" } as unknown as TaskRecord]));
  };
  return { read, reads };
}

describe("chunkedTaskLoads", () => {
  it("reads a chunk's tasks together when its first event asks, and each event gets its own task", async () => {
    const { read, reads } = recordedReads();
    const ids = ["t0", "t1", "t0", "t3", "t4", "t5", "t6", "t7"];
    const taskOf = chunkedTaskLoads("ten_1", ids, read, 3);
    const answered = [];
    for (let i = 0; i < ids.length; i++) answered.push((await taskOf(i))?.id ?? null);
    expect(answered).toEqual(["t0", "t1", "t0", "t3", "t4", "t5", "t6", null]);
    expect(reads).toEqual([
      ["ten_1", "t0", "t1", "t0"],
      ["ten_1", "t3", "t4", "t5"],
      ["ten_1", "t6", "t7"],
    ]);
  });

  it("shares one read among a chunk's events asked at once, and reads a chunk again only if asked after another", async () => {
    const { read, reads } = recordedReads();
    const taskOf = chunkedTaskLoads("ten_1", ["t0", "t1", "t2", "t3"], read, 2);
    await Promise.all([taskOf(0), taskOf(1)]);
    expect(reads).toHaveLength(1);
    await taskOf(2);
    await taskOf(1);
    expect(reads).toEqual([
      ["ten_1", "t0", "t1"],
      ["ten_1", "t2", "t3"],
      ["ten_1", "t0", "t1"],
    ]);
  });

  it("fails the events of a chunk whose read fails, and the next chunk reads anew", async () => {
    let calls = 0;
    const taskOf = chunkedTaskLoads("ten_1", ["t0", "t1", "t2"], async (_tenant, ids) => {
      calls += 1;
      if (calls === 1) throw new Error("connection lost");
      return new Map(ids.map((id) => [id, { id } as unknown as TaskRecord]));
    }, 2);
    await expect(taskOf(0)).rejects.toThrow("connection lost");
    await expect(taskOf(1)).rejects.toThrow("connection lost");
    expect((await taskOf(2))?.id).toBe("t2");
  });
});
