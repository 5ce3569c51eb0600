/**
 * An NDJSON file of task specs (one SubmitTaskInput object per line) read and
 * checked whole before anything is sent: every bad line is reported with its
 * number, and a file with any is not submitted at all, so a run never stops
 * half-way over a typo on line 40,000.
 *
 * Each line is checked as the SDK checks a submitTasks input (the gateway's
 * own zod schema, with the SDK's reading of runAt), plus what the schema lets
 * pass and the API would refuse: a field SubmitTaskInput does not have.
 */
import { parseInput } from "@tasklane/core/schemas/parse";
import { submitTaskInputSchema } from "@tasklane/core/schemas/task";
import { TasklaneError, type DateTimeInput, type SubmitTaskInput } from "@tasklane/sdk";
import { asDate, checkLocally } from "@tasklane/sdk/validate";

/** The fields a line may have: SubmitTaskInput's. */
export const TASK_LINE_FIELDS: ReadonlySet<string> = new Set(Object.keys(submitTaskInputSchema.shape));

export interface TaskLine {
  /** 1-based line number in the file. */
  line: number;
  input: SubmitTaskInput;
}

export interface LineError {
  line: number;
  message: string;
}

export interface TaskLinesOptions {
  /** Every task's queue: a line leaves it out or names this one. */
  queue: string;
  /** The type of a task whose line has none. */
  type?: string | undefined;
  /** Task lines to leave out from the start (blank lines do not count): what an earlier run submitted. */
  skip?: number;
  /** Past this many task lines after `skip`, reading stops and `tooMany` is set (memory: every task is held). */
  maxTasks?: number;
}

export interface TaskLines {
  /** The tasks to send, in file order. */
  tasks: TaskLine[];
  /** Task lines left out by `skip` (fewer when the file has fewer). */
  skipped: number;
  errors: LineError[];
  /** More than maxTasks task lines follow `skip`: `tasks` and `errors` cover only the first ones. */
  tooMany: boolean;
}

export function readTaskLines(text: string, options: TaskLinesOptions): TaskLines {
  const skip = options.skip ?? 0;
  const maxTasks = options.maxTasks ?? Number.POSITIVE_INFINITY;
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  const tasks: TaskLine[] = [];
  const errors: LineError[] = [];
  let seen = 0;
  for (const [index, raw] of lines.entries()) {
    if (raw.trim() === "") continue;
    seen += 1;
    if (seen <= skip) continue;
    if (seen - skip > maxTasks) return { tasks, skipped: skip, errors, tooMany: true };
    const line = index + 1;
    const checked = checkLine(raw, options);
    if (Array.isArray(checked)) errors.push(...checked.map((message) => ({ line, message })));
    else tasks.push({ line, input: checked });
  }
  return { tasks, skipped: Math.min(seen, skip), errors, tooMany: false };
}

/** The line's task, with --queue and --type applied, or why it cannot be sent. */
function checkLine(raw: string, { queue, type }: TaskLinesOptions): SubmitTaskInput | string[] {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error: unknown) {
    return [`not JSON: ${error instanceof Error ? error.message : String(error)}`];
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return ["expected a JSON object: one task spec per line"];
  const spec: Record<string, unknown> = value as Record<string, unknown>;
  const problems: string[] = [];
  const unknown = Object.keys(spec).filter((field) => !TASK_LINE_FIELDS.has(field));
  if (unknown.length > 0) problems.push(`unknown field${unknown.length === 1 ? "" : "s"} ${unknown.map((f) => JSON.stringify(f)).join(", ")} (a line holds SubmitTaskInput's fields: ${[...TASK_LINE_FIELDS].join(", ")})`);
  if (spec.queue != null && spec.queue !== queue) problems.push(`queue ${JSON.stringify(spec.queue)} is not --queue ${JSON.stringify(queue)}`);
  const input: Record<string, unknown> = { ...spec, queue };
  if (input.type == null) {
    if (type === undefined) return [...problems, "type is missing (give it on the line or with --type)"];
    input.type = type;
  }
  try {
    // What the SDK's submitMany runs on each input before sending it.
    checkLocally("submitTasks", () => parseInput(submitTaskInputSchema, { ...input, runAt: asDate(input.runAt as DateTimeInput | null | undefined) }));
  } catch (error: unknown) {
    if (!(error instanceof TasklaneError)) throw error;
    const fields = error.fieldErrors.map((f) => `${f.path === "" ? "input" : f.path}: ${f.message}`);
    problems.push(...(fields.length > 0 ? fields : [error.message]));
  }
  // Checked above against the schema the gateway applies: it is a SubmitTaskInput.
  return problems.length > 0 ? problems : (input as unknown as SubmitTaskInput);
}
