/**
 * `tasklane tasks watch <id>`: a line each time the task's status or attempt
 * changes, until it is terminal; exit 0 when it SUCCEEDED, 1 otherwise.
 *
 * It follows the task through the API's taskUpdated subscription (the SDK's
 * followTask: subscribe, read once, then events, with a read again after a
 * reconnect and every 15 s), so a change shows as it happens and an idle watch
 * costs the gateway nothing. No polling fallback: a gateway that refuses the
 * socket fails the watch (exit 1) with the SDK's error.
 */
import type { Command } from "commander";
import { followTask } from "@tasklane/sdk";
import { clientFor, globalsOf, type CliContext } from "../context.js";
import { ExitCode } from "../errors.js";
import { secondsIn } from "../option-values.js";
import { printJsonLine } from "../output/print.js";
import { formatWatchLine } from "../output/task-views.js";

interface WatchOptions {
  timeout?: number;
}

/** A week: a bound, not a schedule. */
const MAX_WATCH_SECONDS = 7 * 24 * 3600;

export function addWatchCommand(tasks: Command, ctx: CliContext): void {
  tasks
    .command("watch")
    .description("follow a task until it ends: exit 0 if it SUCCEEDED, 1 if not")
    .argument("<id>", "the task's id")
    .option("--timeout <seconds>", "give up after this long (exit 1, TIMEOUT)", secondsIn(1, MAX_WATCH_SECONDS))
    .addHelpText("after", "\n--json prints one object a change: { at, id, status, attempts, maxAttempts, cancelRequested, lastError, result }.\n")
    .action(async (id: string, options: WatchOptions, command: Command) => {
      const client = clientFor(ctx, command);
      const { json } = globalsOf(command);
      const states = followTask({ live: client.live, read: (taskId, opts) => client.tasks.get(taskId, opts) }, id, {
        timeoutMs: options.timeout === undefined ? undefined : options.timeout * 1000,
      });
      let shown = "";
      let succeeded = false;
      for await (const task of states) {
        // A read can repeat what an event showed: a line only for a change.
        const seen = `${task.status}/${task.attempts}/${task.cancelRequested}`;
        if (seen !== shown) {
          shown = seen;
          const at = new Date();
          if (json) {
            const { status, attempts, maxAttempts, cancelRequested, lastError, result } = task;
            printJsonLine(ctx.io, { at: at.toISOString(), id: task.id, status, attempts, maxAttempts, cancelRequested, lastError, result });
          } else {
            ctx.io.out(formatWatchLine(task, at));
          }
        }
        succeeded = task.status === "SUCCEEDED";
      }
      // followTask ends after the first terminal state (or throws: TIMEOUT, NOT_FOUND, a refused socket).
      ctx.exitCode = succeeded ? ExitCode.OK : ExitCode.FAILED;
    });
}
