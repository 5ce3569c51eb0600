/** `tasklane dead-letters list|redrive --all|discard --all`. */
import type { Command } from "commander";
import { TasklaneError, type AllDeadLettersOptions, type CallOptions, type TasklaneClient } from "@tasklane/sdk";
import { confirmed, mustConfirm } from "../confirm.js";
import { answer, clientFor, globalsOf, type CliContext } from "../context.js";
import { ExitCode, INTERRUPTED_ERROR, ReportedFailure, UsageError, describeTasklaneError, reportError } from "../errors.js";
import { catchInterrupts } from "../interrupts.js";
import type { CliIo } from "../io.js";
import { integerIn } from "../option-values.js";
import { count, plural } from "../output/format.js";
import { startProgress } from "../output/progress.js";
import { formatTaskTable, shownOf } from "../output/task-views.js";
import { readPages } from "../paging.js";
import { MAX_LIST_LIMIT } from "./tasks.js";

interface ListOptions {
  queue?: string;
  limit: number;
}

interface BulkOptions {
  all?: boolean;
  queue?: string;
  yes?: boolean;
}

/** The two bulk calls, told apart only by the SDK method and the words. */
interface BulkAction {
  verb: "redrive" | "discard";
  past: "Redrove" | "Discarded";
  /** --json's key for the count, and the word for it ("20 of 50 dead tasks redriven"). */
  key: "redriven" | "discarded";
  run(client: TasklaneClient, options: AllDeadLettersOptions, call: CallOptions): Promise<number>;
}

const REDRIVE: BulkAction = { verb: "redrive", past: "Redrove", key: "redriven", run: (client, o, c) => client.tasks.redriveAllDeadLetters(o, c) };
const DISCARD: BulkAction = { verb: "discard", past: "Discarded", key: "discarded", run: (client, o, c) => client.tasks.discardAllDeadLetters(o, c) };

export function addDeadLettersCommand(program: Command, ctx: CliContext): void {
  const deadLetters = program.command("dead-letters").description("list, redrive and discard DEAD tasks");

  deadLetters
    .command("list")
    .description("DEAD tasks, the one that died last first")
    .option("--queue <name>", "only this queue's dead tasks")
    .option("--limit <n>", `at most n tasks (1 to ${MAX_LIST_LIMIT})`, integerIn(1, MAX_LIST_LIMIT), 50)
    .addHelpText("after", "\n--json prints { totalCount, tasks: [Task, …] }.\n")
    .action(async (options: ListOptions, command: Command) => {
      const client = clientFor(ctx, command);
      const { nodes, totalCount } = await readPages((page) => client.tasks.deadLetters({ queue: options.queue ?? null, ...page }), options.limit);
      answer(ctx, command, { totalCount, tasks: nodes }, () =>
        nodes.length === 0 ? "No dead tasks.\n" : formatTaskTable(nodes, { lastError: true }) + shownOf(nodes.length, totalCount, "dead tasks"),
      );
    });

  deadLetters
    .command("redrive")
    .description("redrive every DEAD task (of --queue, or all queues) with a fresh attempt budget")
    .option("--all", "required: every dead task, a call of up to 1,000 at a time")
    .option("--queue <name>", "only this queue's dead tasks")
    .addHelpText(
      "after",
      "\nAt most as many as were dead when it began: a task that dies again meanwhile is left for the next run.\nA workflow's dead tasks are left (redrive refuses them). --json prints { redriven }.\n",
    )
    .action(async (options: BulkOptions, command: Command) => runBulk(ctx, command, options, REDRIVE));

  deadLetters
    .command("discard")
    .description("take every DEAD task (of --queue, or all queues) out of the dead-letter queue: CANCELLED, history kept (asks first unless --yes)")
    .option("--all", "required: every dead task, a call of up to 1,000 at a time")
    .option("--queue <name>", "only this queue's dead tasks")
    .option("-y, --yes", "do not ask; required when standard input is not a terminal")
    .addHelpText("after", "\n--json prints { discarded }.\n")
    .action(async (options: BulkOptions, command: Command) => runBulk(ctx, command, options, DISCARD));
}

async function runBulk(ctx: CliContext, command: Command, options: BulkOptions, action: BulkAction): Promise<void> {
  const { io } = ctx;
  if (options.all !== true) throw new UsageError(`dead-letters ${action.verb} needs --all (every dead task${options.queue === undefined ? "" : ` of queue "${options.queue}"`})`);
  const client = clientFor(ctx, command);
  const { json, quiet } = globalsOf(command);
  const queue = options.queue ?? null;
  const where = queue === null ? "" : ` of queue "${queue}"`;
  const ask = action === DISCARD && mustConfirm(io, options.yes, `discard every dead task${where}`);
  // The count the progress line counts to (the SDK reads the same count to bound its calls).
  const dead = (await client.tasks.deadLetters({ queue, first: 1 })).totalCount;
  if (ask && dead > 0 && !(await confirmed(io, `Discard ${plural(dead, "dead task")}${where}? They become CANCELLED, their history kept.`))) {
    io.err("Not discarded.\n");
    ctx.exitCode = ExitCode.FAILED;
    return;
  }
  const progress = startProgress(io, { total: dead, noun: "dead tasks", quiet });
  const interrupts = catchInterrupts(io, progress, "call");
  let done = 0;
  let changed: number;
  try {
    // Called even when none are dead: for an unknown --queue its first call is the NOT_FOUND.
    changed = await action.run(
      client,
      {
        queue,
        stop: interrupts.stop,
        onProgress: (p) => {
          done = p.done;
          if (dead > 0) progress.update(p.done);
        },
      },
      { signal: interrupts.abort },
    );
  } catch (error: unknown) {
    progress.finish();
    if (interrupts.gaveUp(error)) {
      reportInterrupted(io, action, done, dead, json, true);
      throw new ReportedFailure(`${action.verb} interrupted`, { cause: error, exitCode: ExitCode.INTERRUPTED });
    }
    // What the calls before the failure did stands; running the command again goes on from there.
    if (json && error instanceof TasklaneError) {
      // One JSON object on stderr, as submit's: the error and how many were done before it.
      io.err(`${JSON.stringify({ error: { ...describeTasklaneError(error), [action.key]: done } })}\n`);
    } else {
      reportError(io, error, json);
      io.err(json ? `${JSON.stringify({ [action.key]: done })}\n` : `${count(done)} of ${count(dead)} ${action.key} before the failure; run the command again to go on.\n`);
    }
    throw new ReportedFailure(`${action.verb} failed`, { cause: error });
  } finally {
    interrupts.release();
  }
  progress.finish();
  if (interrupts.stop.aborted && changed < dead) {
    reportInterrupted(io, action, changed, dead, json, false);
    throw new ReportedFailure(`${action.verb} interrupted`, { exitCode: ExitCode.INTERRUPTED });
  }
  answer(ctx, command, { [action.key]: changed }, () =>
    changed === 0 ? `No dead tasks${where} to ${action.verb}.\n` : `${action.past} ${plural(changed, "dead task")}${where}.\n`,
  );
}

/** Stopped by Ctrl-C: how many were done, and that running the command again goes on from there. */
function reportInterrupted(io: CliIo, action: BulkAction, done: number, dead: number, json: boolean, callGivenUp: boolean): void {
  const unknown = callGivenUp ? "; the call given up may have been done too" : "";
  if (json) {
    io.err(`${JSON.stringify({ error: { ...INTERRUPTED_ERROR, message: `${INTERRUPTED_ERROR.message}${unknown}`, [action.key]: done } })}\n`);
    return;
  }
  io.err(`Interrupted: ${count(done)} of ${count(dead)} dead tasks ${action.key}${unknown}. Run the command again to go on.\n`);
}
