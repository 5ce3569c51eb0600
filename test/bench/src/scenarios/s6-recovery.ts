/**
 * 6. Recovery: Redis (the bench's DB) is wiped while 100,000 tasks are
 * non-terminal (90% due now, 10% due in 2 minutes, all within the dispatch
 * horizon, so all belong in Redis). Recovery time = wipe → every one of them
 * is back in its BullMQ queue (waiting, prioritized or delayed), rebuilt by
 * the scheduler's reconciler from Postgres. No worker runs, so nothing leaves.
 */
import type { Redis } from "ioredis";
import { submitAll } from "../lib/drive.js";
import { TASKLANE_PREFIX, withPlatform } from "../lib/platform.js";
import { fmt, log, Ticker } from "../lib/progress.js";
import { FigureSet } from "../lib/results.js";
import { benchRedis } from "../lib/redis.js";
import { runLabel, type Scenario } from "../lib/scenario.js";
import { TasklaneSystem } from "../lib/tasklane.js";
import { now, sleep, waitUntil } from "../lib/time.js";

const DELAYED_SHARE = 0.1;
const DELAY_MS = 120_000;
const RECOVERY_TIMEOUT_MS = 120_000;

export const recoveryScenario: Scenario = {
  id: 6,
  title: "Recovery after a Redis wipe",
  async run(ctx) {
    const figures = new FigureSet();
    const notes: string[] = [];
    const total = ctx.sizes.recoveryTasks;
    await withPlatform({ worker: false, profile: ctx.profile }, async (platform, tenant) => {
      const system = await TasklaneSystem.push(platform, tenant);
      const redis = benchRedis();
      try {
        const loadedAt = now();
        const load = await submitAll(system, {
          total,
          batchSize: 1000,
          inFlight: 4,
          deadline: now() + 180_000,
          task: (i) => (i % Math.round(1 / DELAYED_SHARE) === 0 ? { runAt: loadedAt + DELAY_MS } : {}),
          ticker: new Ticker("s6 recovery · loading"),
        });
        if (load.acked < total) throw new Error(`only ${load.acked} of ${total} tasks were accepted: ${load.firstError ?? ""}`);
        const sets = await queueSets(redis);
        await waitUntil("every task to be in Redis", async () => ((await countJobs(redis, sets)) >= total ? true : undefined), 60_000, 100);
        for (let i = 0; i < ctx.runs; i++) {
          const ticker = new Ticker(`s6 recovery · Tasklane · ${runLabel(i, ctx.runs)}`, 500);
          const wipedAt = now();
          await redis.flushdb();
          let firstBackAt = 0;
          let count = 0;
          while (count < total && now() - wipedAt < RECOVERY_TIMEOUT_MS) {
            system.assertAlive();
            count = await countJobs(redis, sets);
            if (count > 0 && firstBackAt === 0) firstBackAt = now();
            ticker.tick(`${fmt(count)}/${fmt(total)} runnable again`);
            if (count < total) await sleep(10);
          }
          const seconds = (now() - wipedAt) / 1000;
          ticker.tick(`${fmt(count)}/${fmt(total)} back after ${fmt(seconds, 2)} s (first after ${fmt((firstBackAt - wipedAt) / 1000, 2)} s)`, true);
          if (count < total) notes.push(`${runLabel(i, ctx.runs)}: only ${fmt(count)} of ${fmt(total)} back after ${RECOVERY_TIMEOUT_MS / 1000} s.`);
          figures.add("Tasklane", "all runnable again", "s", "lower", seconds);
          figures.add("Tasklane", "first task back", "s", "lower", firstBackAt ? (firstBackAt - wipedAt) / 1000 : Number.NaN);
          // Let the reconciler mark its new epoch before the next wipe.
          if (i + 1 < ctx.runs) await sleep(2_000);
        }
      } finally {
        redis.disconnect();
        await system.close();
      }
    });
    log("s6 recovery", "done");
    return {
      id: 6,
      title: this.title,
      method:
        `${fmt(total)} PUSH tasks submitted through the API (${Math.round(DELAYED_SHARE * 100)}% due in ${DELAY_MS / 1000} s), gateway and scheduler running, no worker. ` +
        "Per run: FLUSHDB of the bench's Redis DB, then the BullMQ queue sets are counted every 10 ms until all tasks are back. " +
        "'first task back' shows how long the reconciler took to notice the wipe (it checks its epoch key every second).",
      figures: figures.summaries(),
      notes,
    };
  },
};

interface QueueSets {
  lists: string[];
  zsets: string[];
}

/** The BullMQ keys that hold runnable work (found before the wipe; the rebuild recreates the same names). */
async function queueSets(redis: Redis): Promise<QueueSets> {
  const found: QueueSets = { lists: [], zsets: [] };
  for (const [type, into] of [["list", found.lists], ["zset", found.zsets]] as const) {
    let cursor = "0";
    let rounds = 0;
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${TASKLANE_PREFIX}:*`, "COUNT", 10_000, "TYPE", type);
      into.push(...keys.filter((k) => /:(wait|paused|prioritized|delayed)$/.test(k)));
      cursor = next;
    } while (cursor !== "0" && ++rounds < 10_000);
  }
  if (found.lists.length + found.zsets.length === 0) throw new Error(`no BullMQ queue keys under ${TASKLANE_PREFIX}:*`);
  return found;
}

async function countJobs(redis: Redis, sets: QueueSets): Promise<number> {
  const pipeline = redis.pipeline();
  for (const k of sets.lists) pipeline.llen(k);
  for (const k of sets.zsets) pipeline.zcard(k);
  const results = (await pipeline.exec()) ?? [];
  return results.reduce((sum, [, n]) => sum + (typeof n === "number" ? n : 0), 0);
}
