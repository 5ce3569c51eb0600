/**
 * `tasklane submit --queue Q [--type T] --file tasks.ndjson|-`: loads a file
 * of task specs in submitTasks batches, with progress on stderr.
 */
import type { Command } from "commander";
import { MAX_BATCH_SIZE } from "@tasklane/core/limits";
import { TasklaneError } from "@tasklane/sdk";
import { delay } from "@tasklane/sdk/delay";
import { answer, clientFor, globalsOf, type CliContext } from "../context.js";
import { ExitCode, INTERRUPTED_ERROR, Interrupted, ReportedFailure, UsageError, formatTasklaneError } from "../errors.js";
import { catchInterrupts } from "../interrupts.js";
import { FileTooLarge, type CliIo } from "../io.js";
import { integerIn } from "../option-values.js";
import { count, duration, plural } from "../output/format.js";
import { startProgress } from "../output/progress.js";
import { DEFAULT_BATCH_SIZE, DEFAULT_REFUSAL_RETRIES, SubmitStopped, submitInBatches } from "../submit/submit-batches.js";
import { readTaskLines, type LineError, type TaskLine } from "../submit/task-lines.js";

/** Bad lines listed before "… and N more". */
const LINE_ERRORS_SHOWN = 20;

/**
 * The largest file (or standard input) submit reads: it reads and checks the
 * whole file before sending, holding every task in memory (about 500 bytes of
 * heap a task, measured with 86-byte lines), so a bigger file would end in an
 * out-of-memory crash (or, past 512 MiB, a string Node cannot make).
 */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;
/** The most tasks one run sends (about 1 GB of heap), for files of many short lines. */
export const MAX_TASKS_PER_RUN = 2_000_000;

interface SubmitOptions {
  queue: string;
  type?: string;
  file: string;
  skip: number;
  batchSize: number;
  retries: number;
}

const HELP = `
Each line of the file is one task: a JSON object with SubmitTaskInput's fields
(type, payload, priority, runAt or delaySeconds, maxAttempts, backoff,
timeoutSeconds, idempotencyKey, orderingKey, callbackUrl, metadata). A line may
leave out queue (--queue applies) and type (--type applies). Blank lines are
ignored.

The whole file is checked first; if any line is bad, each is reported with its
line number and nothing is sent (exit 1). Then the tasks go in batches of
--batch-size, each all or nothing. A batch refused with RATE_LIMITED or
OVERLOADED is sent again after the Retry-After the gateway gave, up to --retries
times. Any other failure stops the run and says how many tasks were accepted:
run the same command with --skip N to send the rest. Give each line an
idempotencyKey to make any resend harmless.

Ctrl-C stops after the batch in flight and says how many tasks were accepted
and the --skip that resumes (exit 130); a second Ctrl-C gives up on that batch
too (it may have been accepted: both --skip values are given).

A file (or standard input) of more than 256 MiB, or of more than 2,000,000
tasks after --skip, is refused before anything is sent (exit 2): split it
(split -l 1000000 big.ndjson part-) and submit each part. A --skip past the
file's last task is refused too (exit 2): it is not the file of that run.

Progress goes to stderr: one line rewritten in place on a terminal, otherwise a
line per batch; --quiet prints none.

Examples:
  tasklane submit --queue emails --type email.send --file emails.ndjson
  generate-tasks | tasklane submit --queue default --file - --json
  tasklane submit --queue emails --file emails.ndjson --skip 3000
`;

export function addSubmitCommand(program: Command, ctx: CliContext): void {
  program
    .command("submit")
    .description("submit tasks from an NDJSON file (one SubmitTaskInput per line) in batches")
    .requiredOption("--queue <name>", "the queue of every task")
    .option("--type <type>", "the type of tasks whose line has none")
    .requiredOption("--file <path>", "the NDJSON file, or - for standard input")
    .option("--skip <n>", "leave out the first n tasks (resume a stopped run)", integerIn(0, Number.MAX_SAFE_INTEGER), 0)
    .option("--batch-size <n>", `tasks per submitTasks call (1 to ${MAX_BATCH_SIZE})`, integerIn(1, MAX_BATCH_SIZE), DEFAULT_BATCH_SIZE)
    .option("--retries <n>", "send a refused (RATE_LIMITED, OVERLOADED) batch again up to n times", integerIn(0, 100), DEFAULT_REFUSAL_RETRIES)
    .addHelpText("after", HELP)
    .action(async (options: SubmitOptions, command: Command) => submit(ctx, command, options));
}

async function submit(ctx: CliContext, command: Command, options: SubmitOptions): Promise<void> {
  const { io } = ctx;
  const { json, quiet } = globalsOf(command);
  const client = clientFor(ctx, command);
  const source = options.file === "-" ? "stdin" : options.file;
  let text: string;
  try {
    text = await io.readText(options.file, MAX_FILE_BYTES);
  } catch (error: unknown) {
    if (error instanceof FileTooLarge) throw new UsageError(tooLargeMessage(source, error));
    throw new UsageError(`cannot read --file ${options.file}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { tasks, skipped, errors, tooMany } = readTaskLines(text, { queue: options.queue, type: options.type, skip: options.skip, maxTasks: MAX_TASKS_PER_RUN });
  if (tooMany) {
    throw new UsageError(
      `${source} holds more than ${count(MAX_TASKS_PER_RUN)} tasks${skipped > 0 ? " after --skip" : ""}, the most submit sends in one run. Split it (e.g. split -l 1000000 big.ndjson part-) and submit each part.`,
    );
  }
  if (skipped < options.skip) throw new UsageError(`--skip ${options.skip} is past the end: ${source} holds ${plural(skipped, "task")}`);
  if (errors.length > 0) {
    reportBadLines(io, source, errors, json);
    throw new ReportedFailure(`${errors.length} bad lines`);
  }
  if (tasks.length === 0) {
    if (skipped === 0) throw new Error(`${source} holds no tasks`);
    answer(ctx, command, { queue: options.queue, submitted: 0, skipped, ids: [] }, () => `Nothing to submit: all ${plural(skipped, "task")} of ${source} skipped.\n`);
    return;
  }

  const started = Date.now();
  const progress = startProgress(io, { total: tasks.length, noun: "tasks", quiet });
  const interrupts = catchInterrupts(io, progress, "batch");
  let ids: string[];
  try {
    ids = await submitInBatches(
      tasks.map((t) => t.input),
      {
        batchSize: options.batchSize,
        retries: options.retries,
        stop: interrupts.stop,
        abort: interrupts.abort,
        send: (batch, signal) => client.tasks.submitManyIds(batch, signal === undefined ? {} : { signal }),
        wait: delay,
        onAccepted: (accepted) => progress.update(accepted),
        onRefused: ({ error, retry, waitMs, from }) =>
          progress.note(`batch from task ${count(skipped + from + 1)} refused (${error.code}); sending it again in ${duration(waitMs)} (retry ${retry} of ${options.retries})`),
      },
    );
  } catch (error: unknown) {
    progress.finish();
    if (!(error instanceof SubmitStopped)) throw error;
    reportStopped(io, { source, tasks, skipped, stopped: error, json });
    const byUser = error.cause instanceof Interrupted || interrupts.gaveUp(error.cause);
    throw new ReportedFailure(error.message, { cause: error, exitCode: byUser ? ExitCode.INTERRUPTED : ExitCode.FAILED });
  } finally {
    interrupts.release();
  }
  progress.finish();
  const batches = Math.ceil(tasks.length / options.batchSize);
  const after = skipped > 0 ? `, after skipping ${count(skipped)}` : "";
  answer(ctx, command, { queue: options.queue, submitted: ids.length, skipped, ids }, () =>
    `Submitted ${plural(ids.length, "task")} to queue "${options.queue}" in ${plural(batches, "batch", "batches")}${after} (${duration(Date.now() - started)}).\n`,
  );
}

function tooLargeMessage(source: string, error: FileTooLarge): string {
  const mib = (bytes: number) => `${count(Math.ceil(bytes / 2 ** 20))} MiB`;
  const size = source === "stdin" ? `more than ${mib(error.maxBytes)}` : mib(error.bytes);
  return (
    `${source} is ${size}: submit reads and checks a whole file before sending it, up to ${mib(error.maxBytes)}. ` +
    `Split it (e.g. split -l 1000000 big.ndjson part-) and submit each part.`
  );
}

function reportBadLines(io: CliIo, source: string, errors: LineError[], json: boolean): void {
  const lines = new Set(errors.map((e) => e.line)).size;
  const message = `${plural(lines, "bad line")} in ${source}; nothing was submitted`;
  if (json) {
    io.err(`${JSON.stringify({ error: { code: "BAD_USER_INPUT", message, lines: errors } })}\n`);
    return;
  }
  const shown = errors.slice(0, LINE_ERRORS_SHOWN).map((e) => `${source}:${e.line}: ${e.message}`);
  const more = errors.length > LINE_ERRORS_SHOWN ? [`… and ${count(errors.length - LINE_ERRORS_SHOWN)} more`] : [];
  io.err(`error: ${message}\n${[...shown, ...more].join("\n")}\n`);
}

interface StoppedReport {
  source: string;
  tasks: TaskLine[];
  skipped: number;
  stopped: SubmitStopped;
  json: boolean;
}

/** What was accepted and the --skip that resumes after it (both, when the failed batch's fate is unknown). */
function reportStopped(io: CliIo, { source, tasks, skipped, stopped, json }: StoppedReport): void {
  const cause = stopped.cause;
  const resumeSkip = skipped + stopped.accepted;
  const ifAccepted = skipped + stopped.to;
  if (json) {
    const error =
      cause instanceof TasklaneError
        ? { code: cause.code, message: cause.message, requestId: cause.requestId }
        : cause instanceof Interrupted
          ? INTERRUPTED_ERROR
          : { code: "ERROR", message: String(cause) };
    const resume = stopped.outcomeUnknown ? { skip: resumeSkip, skipIfBatchAccepted: ifAccepted } : { skip: resumeSkip };
    io.err(`${JSON.stringify({ error: { ...error, submitted: stopped.accepted, skipped, outcomeUnknown: stopped.outcomeUnknown, resume } })}\n`);
    return;
  }
  if (cause instanceof TasklaneError) io.err(formatTasklaneError(cause));
  else io.err(cause instanceof Interrupted ? "Interrupted.\n" : `error: ${cause instanceof Error ? cause.message : String(cause)}\n`);
  const lastAccepted = stopped.accepted > 0 ? tasks[stopped.accepted - 1] : undefined;
  const through = lastAccepted === undefined ? "" : ` (through line ${count(lastAccepted.line)} of ${source})`;
  io.err(`Submit stopped: ${count(stopped.accepted)} of ${plural(tasks.length, "task")} accepted${through}${skipped > 0 ? `, after skipping ${count(skipped)}` : ""}.\n`);
  const batchLines = `lines ${count(tasks[stopped.from]?.line ?? 0)}–${count(tasks[stopped.to - 1]?.line ?? 0)}`;
  if (stopped.outcomeUnknown) {
    io.err(
      `No answer came for the batch of ${batchLines}: it may have been accepted. If it was (look with tasks list), resume with --skip ${ifAccepted}; if not, with --skip ${resumeSkip}.\n`,
    );
  } else {
    io.err(`Nothing of the batch of ${batchLines} was written. Resume with --skip ${resumeSkip}.\n`);
  }
}
