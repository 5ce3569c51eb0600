import { Counter, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { countFromZero, labelValues } from "./counters-from-zero.js";

describe("countFromZero", () => {
  it("exposes every known label value at 0 before any increment, and counts on from there", async () => {
    const registry = new Registry();
    const counter = new Counter({ name: "t_total", help: "t", labelNames: ["kind"] as const, registers: [registry] });
    countFromZero(counter, "kind", labelValues({ a: true, b: true }));
    counter.inc({ kind: "b" });
    const text = await registry.metrics();
    expect(text).toContain('t_total{kind="a"} 0');
    expect(text).toContain('t_total{kind="b"} 1');
  });
});
