/**
 * Entry point of every probe process (see lib/probe.ts): where handlers run
 * and handler starts are timestamped. The role comes in BENCH_PROBE.
 */
import type { ProbeConfig } from "./lib/probe.js";
import { Recorder } from "./lib/recorder.js";

const config = JSON.parse(process.env.BENCH_PROBE ?? "null") as ProbeConfig | null;
if (!config) throw new Error("BENCH_PROBE is not set: this script is started by the bench harness");

let stop: () => Promise<void> = async () => undefined;
const recorder = new Recorder(() => stop());

/** Each role loads only its own libraries, so a probe's memory is its own. */
async function start(c: ProbeConfig): Promise<() => Promise<void>> {
  switch (c.role) {
    case "push-receiver":
      return (await import("./lib/receiver.js")).runPushReceiver(recorder);
    case "pull-worker":
      return (await import("./lib/pull-worker.js")).runPullWorker(c, recorder);
    case "bullmq-worker":
      return (await import("./peers/bullmq.js")).runBullMqWorker(c, recorder);
    case "graphile-worker":
      return (await import("./peers/graphile.js")).runGraphileWorker(c, recorder);
    case "pgboss-worker":
      return (await import("./peers/pgboss.js")).runPgBossWorker(c, recorder);
  }
}

try {
  stop = await start(config);
} catch (error: unknown) {
  recorder.fail(error);
  setTimeout(() => process.exit(1), 200);
}
