/**
 * `tasklane tasks tail [--queue Q] [--task ID] [--after EVENT]`: a line per
 * status change of the tenant's tasks as it happens, until SIGINT (Ctrl-C) or
 * SIGTERM. Either is how a tail ends, not a run cut short: exit 0.
 *
 * It is the API's taskUpdated subscription through the SDK's live.taskUpdates,
 * which resumes after its last event by itself when the socket is lost.
 * --after resumes across runs: a script that keeps the last id it read misses
 * no event and sees none twice.
 */
import type { Command } from "commander";
import { TasklaneError, type TaskEvent } from "@tasklane/sdk";
import { clientFor, globalsOf, type CliContext } from "../context.js";
import { ReportedFailure, describeTasklaneError, reportError } from "../errors.js";
import type { CliIo } from "../io.js";
import { eventId } from "../option-values.js";
import { printJsonLine } from "../output/print.js";
import { formatTailLine } from "../output/task-views.js";

interface TailOptions {
  queue?: string;
  task?: string;
  after?: string;
}

const HELP = `
A line per status change of the tenant's tasks (of --queue, or of one --task),
as it happens, until Ctrl-C or SIGTERM (exit 0). Each line starts with when the
change happened and the event's id, ascending: --after <id> starts after that
event, with the events since then first (read back by the gateway), then live
ones, in id order and each once. Keep the last id and a restarted tail misses
nothing. A lost socket is made again and resumed the same way by itself.

A tenant's or a queue's feed resumes at most 200,000 events behind the newest
(every tenant's events count); further back is BAD_USER_INPUT (RESUME_TOO_FAR):
tail without --after and read current state with tasks list. One task's feed
(--task) has no such bound. An --after newer than every event is BAD_USER_INPUT
too (UNKNOWN_EVENT).

--json prints one object a line: { id, at, taskId, type, queue, previousStatus,
status, attempts } (attempts: the task's when the event was sent, which may be
past the change). Notes (connected, stopped: the --after that resumes) go to
stderr; --quiet prints none.

Examples:
  tasklane tasks tail --queue emails
  tasklane tasks tail --json --after 184467 >> events.ndjson
`;

export function addTailCommand(tasks: Command, ctx: CliContext): void {
  tasks
    .command("tail")
    .description("print task events as they happen, until Ctrl-C; resumes after an event with --after")
    .option("--queue <name>", "only this queue's tasks")
    .option("--task <id>", "only this task's events")
    .option("--after <event id>", "start after this event (an id tail printed): the events since it first, then live ones", eventId)
    .addHelpText("after", HELP)
    .action(async (options: TailOptions, command: Command) => tail(ctx, command, options));
}

async function tail(ctx: CliContext, command: Command, options: TailOptions): Promise<void> {
  const { io } = ctx;
  const client = clientFor(ctx, command);
  const { json, quiet } = globalsOf(command);
  const note = (text: string) => void (quiet || io.err(`${text}\n`));
  const stop = new AbortController();
  // Released at the first signal: should closing the socket hang, a second one ends the process at once.
  const release = io.onStop(() => {
    release();
    stop.abort();
  });
  /** The id of the last event printed. */
  let printed: string | undefined;
  let failure: { error: unknown } | null = null;
  try {
    const events = client.live.taskUpdates(
      { taskId: options.task ?? null, queue: options.queue ?? null, after: options.after ?? null },
      {
        signal: stop.signal,
        onConnected: (reconnected) => note(reconnected ? reconnectedNote(printed ?? options.after) : connectedNote(options)),
      },
    );
    for await (const event of events) {
      if (json) printJsonLine(io, jsonLineOf(event));
      else io.out(formatTailLine(event));
      printed = event.id;
    }
    // The gateway never completes this subscription itself; should one end anyway, events could follow that the tail would miss.
    if (!stop.signal.aborted) failure = { error: new Error("the gateway ended the task feed") };
  } catch (error: unknown) {
    if (!stop.signal.aborted) failure = { error };
  } finally {
    release();
  }
  const resumeAfter = printed ?? options.after;
  if (failure === null) {
    note(resumeAfter === undefined ? "Stopped." : `Stopped. Resume with --after ${resumeAfter}.`);
    return;
  }
  // Failing before any line (a bad key, an unknown queue, a cursor too far back): as every command reports it.
  if (printed === undefined) throw failure.error;
  reportWithResume(io, failure.error, printed, json);
  throw new ReportedFailure("tail failed", { cause: failure.error });
}

/** The fields a script reads: the event, and the task's type, queue and attempts when it was sent. */
function jsonLineOf({ id, at, taskId, previousStatus, status, task }: TaskEvent) {
  return { id, at, taskId, type: task.type, queue: task.queue, previousStatus, status, attempts: task.attempts };
}

function connectedNote({ queue, task, after }: TailOptions): string {
  const of = [task === undefined ? "" : ` of task ${task}`, queue === undefined ? "" : ` in queue "${queue}"`].join("") || " of every task";
  return `Tailing the events${of}${after === undefined ? "" : ` after event ${after}`} (Ctrl-C to stop).`;
}

function reconnectedNote(after: string | undefined): string {
  // Without an event to resume after, the SDK subscribes afresh: changes while the socket was down are not sent.
  return after === undefined ? "Reconnected; changes while disconnected are not sent (no event yet to resume after)." : "Reconnected; resuming after the last event.";
}

/** The error as every command prints it, then the --after that resumes after the last line printed. */
function reportWithResume(io: CliIo, error: unknown, after: string, json: boolean): void {
  if (!json) {
    reportError(io, error, false);
    io.err(`Resume with --after ${after}.\n`);
    return;
  }
  // One JSON object on stderr, as submit's: the error and where to resume.
  const described = error instanceof TasklaneError ? describeTasklaneError(error) : { code: "ERROR", message: error instanceof Error ? error.message : String(error) };
  io.err(`${JSON.stringify({ error: { ...described, resume: { after } } })}\n`);
}
