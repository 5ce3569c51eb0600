/**
 * `tasklane tasks watch <id>`: a line each time the task's status or attempt
 * changes, until it is terminal; exit 0 when it SUCCEEDED, 1 otherwise.
 *
 * It reads the task (tasks.get) every --interval: the SDK has no client for
 * the API's taskUpdated subscription, and a read a second costs the gateway
 * next to nothing.
 */
import type { Command } from "commander";
import { isTerminalStatus } from "@tasklane/core/statuses";
import { ErrorCode, TasklaneError } from "@tasklane/sdk";
import { delay } from "@tasklane/sdk/delay";
import { clientFor, globalsOf, type CliContext } from "../context.js";
import { ExitCode } from "../errors.js";
import { secondsIn } from "../option-values.js";
import { printJsonLine } from "../output/print.js";
import { formatWatchLine } from "../output/task-views.js";

interface WatchOptions {
  interval: number;
  timeout?: number;
}

/** A week: a bound, not a schedule. */
const MAX_WATCH_SECONDS = 7 * 24 * 3600;

export function addWatchCommand(tasks: Command, ctx: CliContext): void {
  tasks
    .command("watch")
    .description("follow a task until it ends: exit 0 if it SUCCEEDED, 1 if not")
    .argument("<id>", "the task's id")
    .option("--interval <seconds>", "between reads (0.25 to 60)", secondsIn(0.25, 60), 1)
    .option("--timeout <seconds>", "give up after this long (exit 1, TIMEOUT)", secondsIn(1, MAX_WATCH_SECONDS))
    .addHelpText("after", "\n--json prints one object a change: { at, id, status, attempts, maxAttempts, cancelRequested, lastError, result }.\n")
    .action(async (id: string, options: WatchOptions, command: Command) => {
      const client = clientFor(ctx, command);
      const { json } = globalsOf(command);
      const deadline = options.timeout === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeout * 1000;
      let shown = "";
      for (;;) {
        const task = await client.tasks.get(id);
        if (task === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Task ${id} not found`, { operation: "task" });
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
        if (isTerminalStatus(task.status)) {
          ctx.exitCode = task.status === "SUCCEEDED" ? ExitCode.OK : ExitCode.FAILED;
          return;
        }
        const left = deadline - Date.now();
        if (left <= 0) throw new TasklaneError("TIMEOUT", `Task ${id} still ${task.status} after ${options.timeout} s`, { operation: "task" });
        await delay(Math.min(options.interval * 1000, left));
      }
    });
}
