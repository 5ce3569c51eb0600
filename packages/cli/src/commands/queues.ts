/** `tasklane queues list|pause|resume|purge`. */
import type { Command } from "commander";
import { ErrorCode, TasklaneError, type Queue } from "@tasklane/sdk";
import { confirmed, mustConfirm } from "../confirm.js";
import { answer, clientFor, type CliContext } from "../context.js";
import { ExitCode } from "../errors.js";
import { count, plural } from "../output/format.js";
import { formatTable } from "../output/table.js";

export function addQueuesCommand(program: Command, ctx: CliContext): void {
  const queues = program.command("queues").description("list, pause, resume and purge queues");

  queues
    .command("list")
    .description("every queue with its task counts")
    .addHelpText("after", "\n--json prints { queues: [Queue, …] }.\n")
    .action(async (_options: unknown, command: Command) => {
      const list = await clientFor(ctx, command).queues.list();
      answer(ctx, command, { queues: list }, () => (list.length === 0 ? "No queues.\n" : formatQueueTable(list)));
    });

  queues
    .command("pause")
    .description("hold the queue's QUEUED tasks until resume (running tasks finish)")
    .argument("<name>", "the queue's name")
    .action(async (name: string, _options: unknown, command: Command) => {
      const queue = await clientFor(ctx, command).queues.pause(name);
      answer(ctx, command, queue, () => `Paused queue "${queue.name}": ${plural(queue.stats.queued, "queued task")} held until resume.\n`);
    });

  queues
    .command("resume")
    .description("let a paused queue's tasks run again")
    .argument("<name>", "the queue's name")
    .action(async (name: string, _options: unknown, command: Command) => {
      const queue = await clientFor(ctx, command).queues.resume(name);
      answer(ctx, command, queue, () => `Resumed queue "${queue.name}".\n`);
    });

  queues
    .command("purge")
    .description("cancel every task of the queue that is not running (asks first unless --yes)")
    .argument("<name>", "the queue's name")
    .option("-y, --yes", "do not ask; required when standard input is not a terminal")
    .addHelpText("after", "\nQUEUED, SCHEDULED, RETRYING and BLOCKED tasks are cancelled, as cancelTask would; RUNNING tasks finish.\n")
    .action(async (name: string, options: { yes?: boolean }, command: Command) => {
      const client = clientFor(ctx, command);
      if (mustConfirm(ctx.io, options.yes, `purge queue "${name}"`)) {
        // Read before asking, so the question says what would go (and an unknown queue is NOT_FOUND before any question).
        const queue = await client.queues.get(name);
        if (queue === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Queue "${name}" not found`, { operation: "queue" });
        const { queued, scheduled, retrying } = queue.stats;
        const question = `Purge queue "${name}": cancel its ${plural(queued + scheduled + retrying, "task")} not running (${count(queued)} queued, ${count(scheduled)} scheduled, ${count(retrying)} retrying, and any blocked)?`;
        if (!(await confirmed(ctx.io, question))) {
          ctx.io.err("Not purged.\n");
          ctx.exitCode = ExitCode.FAILED;
          return;
        }
      }
      const queue = await client.queues.purge(name);
      const running = queue.stats.running > 0 ? `: ${plural(queue.stats.running, "running task")} will finish` : "";
      answer(ctx, command, queue, () => `Purged queue "${queue.name}"${running}.\n`);
    });
}

function formatQueueTable(queues: readonly Queue[]): string {
  return formatTable(
    ["NAME", "MODE", "PAUSED", "QUEUED", "SCHEDULED", "RUNNING", "RETRYING", "DEAD", "SUCCEEDED", "OLDEST QUEUED"],
    queues.map((q) => [
      q.name,
      q.mode,
      q.paused ? "yes" : "no",
      count(q.stats.queued),
      count(q.stats.scheduled),
      count(q.stats.running),
      count(q.stats.retrying),
      count(q.stats.dead),
      count(q.stats.succeeded),
      q.stats.oldestQueuedAgeSeconds === null ? "-" : `${count(q.stats.oldestQueuedAgeSeconds)} s`,
    ]),
  );
}
