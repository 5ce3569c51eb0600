import { describe, expect, it } from "vitest";
import { parseArgs } from "./cli.js";
import { measures } from "./scenario.js";

describe("bench arguments", () => {
  it("measures every system unless --systems names some, in a fixed order", () => {
    expect(parseArgs([]).systems).toBeUndefined();
    const some = parseArgs(["--systems", "bullmq,pull", "--systems", "pull"]).systems;
    expect(some).toEqual(["pull", "bullmq"]);
    expect(measures({ systems: some }, "pull")).toBe(true);
    expect(measures({ systems: some }, "push")).toBe(false);
    expect(measures({ systems: undefined }, "push")).toBe(true);
  });

  it("refuses a system it does not know", () => {
    expect(() => parseArgs(["--systems", "pull,sidekiq"])).toThrow(/unknown system sidekiq/);
    expect(() => parseArgs(["--systems"])).toThrow(/needs a value/);
  });

  it("keeps its other defaults", () => {
    expect(parseArgs(["--quick"])).toMatchObject({ quick: true, runs: 1, scenarios: [1, 2, 3, 4, 5, 6, 7], profile: [] });
    expect(parseArgs(["--scenario", "3,1", "--runs", "5"])).toMatchObject({ quick: false, runs: 5, scenarios: [1, 3] });
  });
});
