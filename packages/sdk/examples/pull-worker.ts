/**
 * A pull worker for the queue "default".
 *
 *   TASKLANE_URL=http://127.0.0.1:4000/graphql TASKLANE_API_KEY=tl_… node dist/examples/pull-worker.js
 *
 * Task types it knows:
 * - example.greet        → { greeting: "Hello, <payload.name>!" }
 * - example.flaky        → fails (retryably) until attempt payload.succeedOnAttempt, then succeeds
 * - example.reject       → NonRetryableError: no retries, the task goes straight to DEAD
 * anything else          → NonRetryableError("no handler for …")
 *
 * Ctrl-C stops leasing at once and lets running tasks finish (up to 30 s).
 */
import { NonRetryableError, Worker, type TaskContext, type TasklaneClient, type Task, type WorkerSettings } from "@tasklane/sdk";
import { clientFromEnv, isMain, runMain } from "./env.js";

export interface ExamplePayload {
  name?: string;
  succeedOnAttempt?: number;
}

export async function exampleHandler(task: Task<ExamplePayload>, ctx: TaskContext): Promise<unknown> {
  switch (task.type) {
    case "example.greet":
      // A real handler would send the greeting with the task id as the idempotency key of that side effect.
      return { greeting: `Hello, ${task.payload?.name ?? "world"}!` };
    case "example.flaky": {
      const goal = task.payload?.succeedOnAttempt ?? 2;
      if (ctx.attempt < goal) throw new Error(`transient failure on attempt ${ctx.attempt}`);
      return { attempt: ctx.attempt };
    }
    case "example.reject":
      throw new NonRetryableError("this input can never succeed");
    default:
      throw new NonRetryableError(`no handler for task type ${task.type}`);
  }
}

export function createExampleWorker(
  client: TasklaneClient,
  options: Partial<Omit<WorkerSettings<ExamplePayload, unknown>, "handler">> = {},
): Worker<ExamplePayload, unknown> {
  return new Worker<ExamplePayload, unknown>({ client, queue: "default", handler: exampleHandler, concurrency: 5, ...options });
}

async function main(): Promise<void> {
  const worker = createExampleWorker(clientFromEnv());
  await worker.start();
  console.log(`worker ${worker.workerId} is leasing from queue "default"; Ctrl-C to stop`);
  const shutdown = () => {
    console.log("stopping: no new leases, waiting for running tasks…");
    void worker.stop({ graceMs: 30_000 }).then(() => console.log("stopped"));
  };
  process.once("SIGINT", shutdown);
  process.once("SIGTERM", shutdown);
}

if (isMain(import.meta.url)) runMain(main);
