/**
 * A handler that respects ctx.signal: cancelTask reaches it through the next
 * heartbeat, and it stops between steps instead of finishing the work.
 *
 *   TASKLANE_URL=http://127.0.0.1:4000/graphql TASKLANE_API_KEY=tl_… node dist/examples/cancellation.js
 */
import { setTimeout as sleep } from "node:timers/promises";
import { TaskAbortedError, Worker, type TaskHandler, type TasklaneClient, type Task } from "@tasklane/sdk";
import { clientFromEnv, isMain, runMain } from "./env.js";

export interface SlowPayload {
  steps: number;
  stepMs: number;
}

/** Works in steps; each step's wait ends early when the signal aborts. */
export const slowHandler: TaskHandler<SlowPayload, { stepsDone: number }> = async (task, ctx) => {
  const { steps, stepMs } = task.payload ?? { steps: 10, stepMs: 500 };
  for (let step = 0; step < steps; step++) {
    // Rejects with an AbortError as soon as ctx.signal aborts; ctx.signal.reason (a TaskAbortedError) says why.
    await sleep(stepMs, undefined, { signal: ctx.signal });
  }
  return { stepsDone: steps };
};

export interface CancellationOutcome {
  task: Task<SlowPayload>;
  /** Why the handler's signal fired, as the handler saw it. */
  abortReason: TaskAbortedError["reason"] | null;
}

/**
 * Starts a worker, submits a slow task, cancels it once it runs, and reports what the handler saw.
 * On a PULL queue of its own (created if absent): on "default", the pull-worker example, if it runs
 * too, would lease the slow task and dead-letter it as a type it has no handler for.
 */
export async function cancelRunningTask(client: TasklaneClient, options: { queue?: string } = {}): Promise<CancellationOutcome> {
  const queue = options.queue ?? "example-cancellation";
  await client.queues.upsert({ name: queue, mode: "PULL" });
  let abortReason: TaskAbortedError["reason"] | null = null;
  const worker = new Worker<SlowPayload, { stepsDone: number }>({
    client,
    queue,
    leaseSeconds: 3,
    heartbeatEverySeconds: 0.5,
    pollWaitSeconds: 1,
    handler: async (task, ctx) => {
      try {
        return await slowHandler(task, ctx);
      } catch (error: unknown) {
        if (ctx.signal.reason instanceof TaskAbortedError) abortReason = ctx.signal.reason.reason;
        throw error;
      }
    },
    // The outcome of a cancelled task is refused (CONFLICT); that is expected here.
    onError: (error, context) => {
      if (!("refused" in context && context.refused)) console.error(context, error);
    },
  });
  await worker.start();
  try {
    const task = await client.tasks.submit<SlowPayload>({ type: "example.slow", queue, payload: { steps: 100, stepMs: 200 } });
    while ((await client.tasks.get(task.id))?.status !== "RUNNING") await sleep(50);
    await client.tasks.cancel(task.id);
    const deadline = Date.now() + 15_000;
    while (abortReason === null && Date.now() < deadline) await sleep(50);
    const final = await client.tasks.get<SlowPayload>(task.id);
    if (final === null) throw new Error(`task ${task.id} disappeared`);
    return { task: final, abortReason };
  } finally {
    await worker.stop({ graceMs: 5_000 });
  }
}

async function main(): Promise<void> {
  const { task, abortReason } = await cancelRunningTask(clientFromEnv());
  console.log(`${task.id} is ${task.status}; the handler stopped because: ${abortReason ?? "it was never aborted"}`);
}

if (isMain(import.meta.url)) runMain(main);
