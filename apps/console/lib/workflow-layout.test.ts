import { describe, expect, it } from "vitest";
import { layoutByLevel } from "./workflow-layout";

describe("layoutByLevel", () => {
  it("puts each task one level right of its deepest dependency", () => {
    const placed = layoutByLevel([
      { key: "fetch", dependsOn: [] },
      { key: "resize", dependsOn: ["fetch"] },
      { key: "thumbs", dependsOn: ["fetch"] },
      { key: "publish", dependsOn: ["resize", "thumbs", "fetch"] },
    ]);
    expect(placed).toEqual([
      { key: "fetch", level: 0, row: 0 },
      { key: "resize", level: 1, row: 0 },
      { key: "thumbs", level: 1, row: 1 },
      { key: "publish", level: 2, row: 0 },
    ]);
  });

  it("ignores unknown dependencies and survives a cycle", () => {
    const placed = layoutByLevel([
      { key: "a", dependsOn: ["b", "ghost"] },
      { key: "b", dependsOn: ["a"] },
    ]);
    expect(placed.map((p) => p.key)).toEqual(["a", "b"]);
  });
});
