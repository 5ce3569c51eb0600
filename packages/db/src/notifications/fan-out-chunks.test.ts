import { describe, expect, it } from "vitest";
import { chunksOfBodyBytes } from "./fan-out.js";
import type { PlannedDelivery } from "./plan-deliveries.js";

const delivery = (id: string, bodyLength: number): PlannedDelivery => ({
  id,
  tenantId: "ten_1",
  webhookId: "whk_1",
  url: "https://example.com/hook",
  event: "task.succeeded",
  taskId: "task_1",
  workflowId: null,
  body: "x".repeat(bodyLength),
});

describe("chunksOfBodyBytes", () => {
  it("cuts runs before their bodies pass the bound, in order, and gives a longer body a run of its own", () => {
    const planned = [delivery("a", 4), delivery("b", 4), delivery("c", 3), delivery("d", 12), delivery("e", 1)];
    expect([...chunksOfBodyBytes(planned, 10)].map((run) => run.map((d) => d.id))).toEqual([["a", "b"], ["c"], ["d"], ["e"]]);
  });

  it("keeps everything in one run when it fits, and yields nothing for nothing", () => {
    expect([...chunksOfBodyBytes([delivery("a", 5), delivery("b", 5)], 10)].map((run) => run.length)).toEqual([2]);
    expect([...chunksOfBodyBytes([], 10)]).toEqual([]);
  });
});
