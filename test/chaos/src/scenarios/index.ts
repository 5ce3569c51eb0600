import type { Scenario } from "./scenario.js";
import { workerKills } from "./s01-worker-kills.js";
import { frozenPullWorker } from "./s02-frozen-pull-worker.js";
import { schedulerKills } from "./s03-scheduler-kills.js";
import { redisWipe } from "./s04-redis-wipe.js";
import { postgresRestart } from "./s05-postgres-restart.js";
import { gatewayKills } from "./s06-gateway-kills.js";
import { schedulerFailover } from "./s07-scheduler-ha.js";
import { poisonTasks } from "./s08-poison.js";
import { webhookOutage } from "./s09-webhook-outage.js";
import { thunderingHerd } from "./s10-thundering-herd.js";

/** Every scenario, in the order. */
export const SCENARIOS: Scenario[] = [
  workerKills,
  frozenPullWorker,
  schedulerKills,
  redisWipe,
  postgresRestart,
  gatewayKills,
  schedulerFailover,
  poisonTasks,
  webhookOutage,
  thunderingHerd,
];

/** The scenarios named (comma-separated ids), or all. */
export const selectScenarios = (only: string | undefined) => (only ? SCENARIOS.filter((s) => only.split(",").includes(String(s.id))) : SCENARIOS);
export const selectedScenarios = () => selectScenarios(process.env.CHAOS_ONLY);
