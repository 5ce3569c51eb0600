/**
 * 2. Submission throughput, consumers stopped: one task per call with 32
 * calls in flight, and batches of 500 with 4 calls in flight. A task counts
 * once the system acknowledged it (Tasklane: committed to Postgres and
 * placed in Redis, the answer read by the client).
 */
import { withCpuPerTask } from "../lib/cpu.js";
import { submitAll, warmUp } from "../lib/drive.js";
import type { PeerKind } from "../lib/peers.js";
import { fmt, log, Ticker } from "../lib/progress.js";
import { FigureSet } from "../lib/results.js";
import { inRounds, peerOpener, tasklaneOpener } from "../lib/rounds.js";
import { runLabel, type Scenario } from "../lib/scenario.js";
import type { BenchSystem } from "../lib/system.js";
import { now } from "../lib/time.js";
import { TasklaneSystem } from "../lib/tasklane.js";

const SINGLE_IN_FLIGHT = 32;
const BATCH = 500;
const BATCH_IN_FLIGHT = 4;
const PEERS: PeerKind[] = ["bullmq", "graphile", "pg-boss"];
const CPU_TABLE = "CPU time per 1,000 submitted tasks (ms), by process";

export const submissionScenario: Scenario = {
  id: 2,
  title: "Submission throughput",
  async run(ctx) {
    const figures = new FigureSet();
    const notes: string[] = [];
    /** One round of one system, opened afresh (no backlog from earlier rounds): warmed up, then each mode once. */
    const measureOnce = async (system: BenchSystem, round: number) => {
      await warmUp(system, { consumers: false, count: ctx.quick ? 100 : 300 });
      for (const mode of [
        { metric: `single, ${SINGLE_IN_FLIGHT} in flight`, total: ctx.sizes.submitSingleTasks, batchSize: 1, inFlight: SINGLE_IN_FLIGHT },
        { metric: `batches of ${BATCH}`, total: ctx.sizes.submitBatchTasks, batchSize: BATCH, inFlight: BATCH_IN_FLIGHT },
      ]) {
        const ticker = new Ticker(`s2 submission · ${system.label} · ${mode.metric} · ${runLabel(round, ctx.runs)}`);
        const out = await withCpuPerTask(
          system,
          (process, ms) => figures.add(system.label, `${mode.metric}: ${process}`, "ms", "lower", ms, CPU_TABLE),
          async () => {
            const submitted = await submitAll(system, { ...mode, deadline: now() + ctx.sizes.submitSeconds * 1000, ticker });
            return { ...submitted, finished: submitted.acked };
          },
        );
        const rate = (out.acked * 1000) / out.elapsedMs;
        ticker.tick(`${fmt(out.acked)} acknowledged in ${fmt(out.elapsedMs)} ms · ${fmt(rate)}/s`, true);
        figures.add(system.label, mode.metric, "tasks/s", "higher", rate);
        if (out.errors) notes.push(`${system.label} ${mode.metric}: ${out.errors} failed calls (${out.firstError ?? ""}).`);
      }
    };
    const openers = [
      tasklaneOpener({ worker: false, profile: ctx.profile }, (platform, tenant) => TasklaneSystem.push(platform, tenant, { label: "Tasklane" })),
      ...PEERS.map(peerOpener),
    ];
    await inRounds(ctx.runs, openers, measureOnce);
    log("s2 submission", "done");
    return {
      id: 2,
      title: this.title,
      method:
        `In ${ctx.runs} rounds, each opening every system afresh in turn (so no round inherits an earlier one's backlog, and each takes a share of the machine's phases); per round: up to ${fmt(ctx.sizes.submitSingleTasks)} tasks one per call (${SINGLE_IN_FLIGHT} calls in flight), then up to ${fmt(ctx.sizes.submitBatchTasks)} in batches of ${BATCH} ` +
        `(${BATCH_IN_FLIGHT} calls in flight), each for at most ${ctx.sizes.submitSeconds} s, no consumers running; rate = acknowledged tasks ÷ elapsed. Tasklane: submitTask / submitTasks through the ` +
        "GraphQL API with the SDK (batches with `submitManyIds`, answering each task's id), to a PUSH queue (so every task is also placed in Redis before the answer). " +
        "Peers: BullMQ add / addBulk, graphile-worker addJob / addJobs, pg-boss send / insert.",
      figures: figures.summaries(),
      ratios: true,
      notes,
    };
  },
};
