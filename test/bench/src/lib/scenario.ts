import type { ScenarioResult } from "./results.js";
import type { SystemName } from "./cli.js";
import type { Sizes } from "./sizes.js";

export interface ScenarioContext {
  sizes: Sizes;
  /** Runs per measurement. */
  runs: number;
  quick: boolean;
  /** Tasklane apps to run under --cpu-prof. */
  profile: readonly string[];
  /** `--systems`: the only systems s1, s3 and s4 measure; undefined = all. */
  systems?: readonly SystemName[] | undefined;
  /** Results of the scenarios already run (scenario 7 reads scenario 1's memory). */
  earlier: ReadonlyMap<number, ScenarioResult>;
}

export interface Scenario {
  id: number;
  title: string;
  run(ctx: ScenarioContext): Promise<ScenarioResult>;
}

/** Whether this run measures `system` (`--systems`). */
export const measures = (ctx: Pick<ScenarioContext, "systems">, system: SystemName) => ctx.systems === undefined || ctx.systems.includes(system);

/** "run 2/3" */
export const runLabel = (i: number, runs: number) => `run ${i + 1}/${runs}`;
