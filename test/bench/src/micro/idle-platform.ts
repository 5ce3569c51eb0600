/**
 * What the platform costs while it has nothing to do: the gateway,
 * scheduler, notifier and worker as production runs them (withPlatform), one
 * tenant with a PULL and a PUSH queue and no tasks, the CPU of each process,
 * of the Postgres backends serving them and of the Redis server read from
 * /proc over a window, after the apps have settled. Every poll a loop makes
 * and every timer a process keeps shows here; under load it hides in the
 * work.
 *
 *   npm run build && node test/bench/dist/micro/idle-platform.js [--seconds 40] [--rounds 2]
 *
 * Rounds run on one platform, one after the other; compare builds in
 * alternating invocations.
 */
import { parseArgs } from "node:util";
import { CpuMeter, POSTGRES_LABEL } from "../lib/cpu.js";
import { withPlatform } from "../lib/platform.js";
import { redisServerProcess, resolveRedisServerPid } from "../lib/redis.js";
import { spread } from "../lib/stats.js";

/** Start-up work (migrations checked, caches filled, first polls) is over by then. */
const SETTLE_MS = 8_000;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: "string", default: "40" }, rounds: { type: "string", default: "2" } } });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  if (!(seconds >= 5) || !Number.isInteger(rounds) || rounds < 1) throw new Error("--seconds must be at least 5 and --rounds a whole number of at least 1");
  await resolveRedisServerPid();
  await withPlatform({ worker: true, profile: [] }, async (platform, tenant) => {
    await tenant.client.queues.upsert({ name: "idle-pull", mode: "PULL" });
    await tenant.client.queues.upsert({ name: "idle-push", mode: "PUSH", endpointUrl: "http://127.0.0.1:9/idle" });
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const watched = [...platform.processes().map((p) => ({ label: p.label.replace(/^tasklane-/, ""), pid: p.pid })), ...redisServerProcess()];
    const labels = [...watched.map((p) => p.label), POSTGRES_LABEL];
    const shares = new Map<string, number[]>(labels.map((l) => [l, []]));
    const totals: number[] = [];
    process.stdout.write(`idle-platform: ${rounds} rounds of ${seconds} s; % of one core\n`);
    for (let round = 1; round <= rounds; round++) {
      const meter = new CpuMeter(watched, { pool: platform.db.pool, database: platform.db.name });
      await meter.start();
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const used = await meter.stop();
      // CPU ms over a window of `seconds`: ms / (seconds * 1000) * 100 percent.
      const share = (label: string) => (used.get(label) ?? 0) / seconds / 10;
      for (const l of labels) shares.get(l)!.push(share(l));
      totals.push(labels.reduce((sum, l) => sum + share(l), 0));
      process.stdout.write(`round ${round}/${rounds}: ${labels.map((l) => `${l} ${share(l).toFixed(2)}`).join(" · ")} · total ${totals.at(-1)!.toFixed(2)}\n`);
    }
    const med = (values: number[]) => spread(values).median.toFixed(2);
    process.stdout.write(`median: ${labels.map((l) => `${l} ${med(shares.get(l)!)}`).join(" · ")} · total ${med(totals)}\n`);
  });
}

await main();
