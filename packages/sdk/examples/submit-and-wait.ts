/**
 * Submits a task to the queue "default" and waits for its outcome.
 * Run pull-worker.ts alongside so something processes it.
 *
 *   TASKLANE_URL=http://127.0.0.1:4000/graphql TASKLANE_API_KEY=tl_… node dist/examples/submit-and-wait.js Ada
 */
import { randomUUID } from "node:crypto";
import type { TasklaneClient, TaskWithAttempts } from "@tasklane/sdk";
import { clientFromEnv, isMain, runMain } from "./env.js";

export async function submitAndWait(
  client: TasklaneClient,
  name: string,
  options: { timeoutMs?: number } = {},
): Promise<TaskWithAttempts<{ name: string }, { greeting: string }>> {
  const submitted = await client.tasks.submit({
    type: "example.greet",
    queue: "default",
    payload: { name },
    // With a key, a submission whose response was lost is retried safely: the
    // gateway returns the first task instead of creating a second one.
    idempotencyKey: `greet-${randomUUID()}`,
  });
  return client.tasks.waitFor<{ name: string }, { greeting: string }>(submitted.id, { timeoutMs: options.timeoutMs ?? 60_000 });
}

async function main(): Promise<void> {
  const task = await submitAndWait(clientFromEnv(), process.argv[2] ?? "world");
  console.log(`${task.id} ${task.status} after ${task.attempts} attempt(s)`, task.result ?? task.lastError);
  if (task.status !== "SUCCEEDED") process.exitCode = 1;
}

if (isMain(import.meta.url)) runMain(main);
