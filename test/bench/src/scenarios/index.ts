import type { Scenario } from "../lib/scenario.js";
import { throughputScenario } from "./s1-throughput.js";
import { submissionScenario } from "./s2-submission.js";
import { delayedScenario } from "./s3-delayed.js";
import { immediateScenario } from "./s4-immediate.js";
import { fairnessScenario } from "./s5-fairness.js";
import { recoveryScenario } from "./s6-recovery.js";
import { memoryScenario } from "./s7-memory.js";

/** Every scenario, by number. */
export const SCENARIOS: readonly Scenario[] = [throughputScenario, submissionScenario, delayedScenario, immediateScenario, fairnessScenario, recoveryScenario, memoryScenario];
