import { Worker } from "@tasklane/sdk";
import { refOf } from "./probe-protocol.js";
import type { Recorder } from "./recorder.js";

export interface PullWorkerConfig {
  url: string;
  apiKey: string;
  queue: string;
  concurrency: number;
}

/** A tenant's pull worker: the SDK Worker with a no-op handler. */
export async function runPullWorker(config: PullWorkerConfig, recorder: Recorder): Promise<() => Promise<void>> {
  const worker = new Worker({
    url: config.url,
    apiKey: config.apiKey,
    queue: config.queue,
    concurrency: config.concurrency,
    pollWaitSeconds: 5,
    handler: (task) => {
      recorder.start(task.id, refOf(task.payload));
      return null;
    },
    onError: (error, context) => {
      if (context.phase !== "lease") recorder.fail(error);
    },
  });
  await worker.start();
  recorder.ready();
  return () => worker.stop({ graceMs: 5_000 });
}
