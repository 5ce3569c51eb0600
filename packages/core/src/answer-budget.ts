/**
 * What one GraphQL answer may read of tasks in bulk: workflows' tasks and
 * schedules' runs, which a single request can ask for by the thousand
 * (`workflows(first: 500) { tasks { … } }` was up to 1,000,000 task rows,
 * 2,000 × 256 KiB payloads per workflow). The gateway holds an answer
 * several times over (rows, values, the JSON), so it ran out of memory for
 * every tenant on one such request (session 45).
 *
 * Two bounds per request, shared by every bulk read in it:
 * - ANSWER_TASK_ROWS rows: past it the read is refused with BAD_USER_INPUT
 *   (nothing of it is read); the caller asks for fewer at once;
 * - ANSWER_BODY_BYTES of payloads and results (their JSON text): the tasks
 *   past it come back whole but for those two fields, which answer null with
 *   a BAD_USER_INPUT error (WITHHELD_BODY); the caller reads them with
 *   task(id). The bodies past it never leave Postgres.
 */
import { BadUserInputError } from "./errors.js";

/** Payloads and results one answer carries from bulk task reads, in bytes of JSON text (as a `tasks` page's bound). */
export const ANSWER_BODY_BYTES = 4 * 1024 * 1024;

/** Task rows one answer reads in bulk (workflow tasks and schedule runs together): five full workflows. */
export const ANSWER_TASK_ROWS = 10_000;

/** What is left of an answer's budget. */
export interface BulkReadAllowance {
  bytes: number;
  rows: number;
}

/** What a bulk read returns: its value and what it took of the allowance. */
export interface BulkRead<T> {
  value: T;
  used: BulkReadAllowance;
}

/**
 * The error a task's payload or result field answers with when the answer's
 * bodies passed ANSWER_BODY_BYTES. It is the field's value, not thrown:
 * graphql-js and graphql-jit both answer a field whose value is an Error
 * with that error, keeping its class (so its code), where an error thrown by
 * a scalar's serialize loses it under graphql-jit.
 *
 * It must never be written anywhere: serialising it (a PUSH body, a webhook,
 * a Postgres parameter, which pg writes with JSON.stringify) throws rather
 * than write `{}` in place of a payload.
 */
export class WithheldBodyError extends BadUserInputError {
  constructor() {
    super(
      `Withheld: this answer's task payloads and results passed ${ANSWER_BODY_BYTES.toLocaleString("en-US")} bytes (4 MiB). ` +
        "Read this task with task(id), or ask for fewer tasks at once",
    );
    Object.assign(this.extensions, { reason: "ANSWER_BODY_BYTES", limitBytes: ANSWER_BODY_BYTES });
  }

  toJSON(): never {
    throw new TypeError("a withheld task body (WITHHELD_BODY) was serialised: it is a read's placeholder, never data");
  }
}

/** The one placeholder for a withheld payload or result (only bulk list reads produce it). */
export const WITHHELD_BODY: WithheldBodyError = Object.freeze(new WithheldBodyError());
Object.freeze(WITHHELD_BODY.extensions);

/** Refusal of a bulk read over the rows left (`rows`: how many it would read, at least; `instead`: another way to read them). */
export function tooManyTaskRows(what: string, rows: number, left: number, instead = ""): BadUserInputError {
  const earlier = left < ANSWER_TASK_ROWS ? ` (${(ANSWER_TASK_ROWS - left).toLocaleString("en-US")} read already by this answer)` : "";
  const error = new BadUserInputError(
    `${what} hold more than ${left.toLocaleString("en-US")} tasks (at least ${rows.toLocaleString("en-US")}); one answer reads at most ` +
      `${ANSWER_TASK_ROWS.toLocaleString("en-US")}${earlier}: ask for fewer at once${instead ? `, or ${instead}` : ""}`,
    [],
  );
  // A reason clients can act on (the SDK's workflow pages shrink on it), beside the code.
  Object.assign(error.extensions, { reason: "ANSWER_TASK_ROWS", limitRows: ANSWER_TASK_ROWS });
  return error;
}

/**
 * One answer's budget. Reads run one after another, each with what the ones
 * before it left, so two reads of one request (aliases, a second batch)
 * cannot both spend the whole of it.
 */
export class AnswerBudget {
  #left: BulkReadAllowance;
  #tail: Promise<unknown> = Promise.resolve();

  constructor(limits: BulkReadAllowance = { bytes: ANSWER_BODY_BYTES, rows: ANSWER_TASK_ROWS }) {
    this.#left = { ...limits };
  }

  get left(): Readonly<BulkReadAllowance> {
    return this.#left;
  }

  spend<T>(read: (left: Readonly<BulkReadAllowance>) => Promise<BulkRead<T>>): Promise<T> {
    const run = this.#tail.then(async () => {
      const { value, used } = await read({ ...this.#left });
      this.#left = { bytes: Math.max(0, this.#left.bytes - used.bytes), rows: Math.max(0, this.#left.rows - used.rows) };
      return value;
    });
    // A refused read spends nothing and holds up nothing after it.
    this.#tail = run.catch(() => undefined);
    return run;
  }
}
