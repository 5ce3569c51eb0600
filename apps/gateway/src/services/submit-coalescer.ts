/**
 * Group commit for submissions. Each submission costs a transaction, an
 * insert statement and a dispatch call whatever its size, so a tenant sending many
 * small submissions at once (submitTask one at a time, 32 in flight) spends
 * nearly all of it on per-statement overhead. Submissions of one tenant and
 * actor that arrive while that lane already has its statements in flight wait
 * for one to finish and then go together, as one batch; an idle lane goes at
 * once, so a lone submission never waits.
 *
 * A batch is all or nothing, but requests are not: when a merged batch is
 * refused with a typed error (an unknown queue, a quota), each request runs
 * again on its own and gets its own answer. Any other failure (the database
 * unreachable) fails every request of the batch, as it would have failed each
 * of them alone; they are not retried, since a commit whose answer was lost
 * must not be applied twice.
 */
import { ANSWER_BODY_BYTES, UserError } from "@tasklane/core";
import type { SubmitResult, TaskInsert } from "@tasklane/db";

/**
 * One submission statement; T is what it answers per task (the whole task, or
 * a SubmittedTaskRef). `repeatBodyBytes`: what the answer may carry of the
 * bodies of tasks the specs' keys repeat (SubmitOptions.repeatBodyBytes).
 */
export type SubmitRun<T extends { id: string }> = (tenantId: string, specs: TaskInsert[], actor: string, repeatBodyBytes: number) => Promise<SubmitResult<T>>;

interface Waiting<T> {
  specs: TaskInsert[];
  repeatBodyBytes: number;
  resolve: (result: SubmitResult<T>) => void;
  reject: (error: unknown) => void;
}

interface Lane<T> {
  tenantId: string;
  actor: string;
  waiting: Waiting<T>[];
  inFlight: number;
}

export interface CoalescerOptions {
  /** Most tasks in one merged batch (the submitTasks limit). */
  maxBatch: number;
  /** Statements a lane runs at once before submissions start to queue. */
  maxInFlight: number;
}

export class SubmitCoalescer<T extends { id: string }> {
  readonly #lanes = new Map<string, Lane<T>>();

  constructor(
    private readonly run: SubmitRun<T>,
    private readonly options: CoalescerOptions = { maxBatch: 500, maxInFlight: 2 },
  ) {}

  submit(tenantId: string, specs: TaskInsert[], actor: string, repeatBodyBytes: number = ANSWER_BODY_BYTES): Promise<SubmitResult<T>> {
    if (specs.length >= this.options.maxBatch) return this.run(tenantId, specs, actor, repeatBodyBytes);
    const key = `${tenantId}\u0000${actor}`;
    let lane = this.#lanes.get(key);
    if (lane === undefined) {
      lane = { tenantId, actor, waiting: [], inFlight: 0 };
      this.#lanes.set(key, lane);
    }
    const joined = lane;
    return new Promise<SubmitResult<T>>((resolve, reject) => {
      joined.waiting.push({ specs, repeatBodyBytes, resolve, reject });
      this.#pump(key, joined);
    });
  }

  #pump(key: string, lane: Lane<T>): void {
    while (lane.inFlight < this.options.maxInFlight && lane.waiting.length > 0) {
      const batch = this.#takeBatch(lane);
      lane.inFlight++;
      void this.#flush(lane, batch).finally(() => {
        lane.inFlight--;
        if (lane.inFlight === 0 && lane.waiting.length === 0) this.#lanes.delete(key);
        else this.#pump(key, lane);
      });
    }
  }

  /** The oldest waiting requests, up to maxBatch tasks (always at least one request). */
  #takeBatch(lane: Lane<T>): Waiting<T>[] {
    const batch: Waiting<T>[] = [];
    let tasks = 0;
    for (;;) {
      const next = lane.waiting[0];
      if (next === undefined || (batch.length > 0 && tasks + next.specs.length > this.options.maxBatch)) return batch;
      lane.waiting.shift();
      batch.push(next);
      tasks += next.specs.length;
    }
  }

  async #flush(lane: Lane<T>, batch: Waiting<T>[]): Promise<void> {
    if (batch.length === 1) {
      const only = batch[0] as Waiting<T>;
      await this.run(lane.tenantId, only.specs, lane.actor, only.repeatBodyBytes).then(only.resolve, only.reject);
      return;
    }
    let merged: SubmitResult<T>;
    try {
      // The least any of the requests has left bounds the batch's repeats: each answer stays within its own (a request
      // may then see a body withheld it would have had alone; it reads it with task(id)).
      const repeatBodyBytes = Math.min(...batch.map((w) => w.repeatBodyBytes));
      merged = await this.run(lane.tenantId, batch.flatMap((w) => w.specs), lane.actor, repeatBodyBytes);
    } catch (error) {
      if (!(error instanceof UserError)) {
        for (const w of batch) w.reject(error);
        return;
      }
      // Refused as a whole: let each request find out on its own whether it was the cause.
      await Promise.all(batch.map((w) => this.run(lane.tenantId, w.specs, lane.actor, w.repeatBodyBytes).then(w.resolve, w.reject)));
      return;
    }
    let offset = 0;
    for (const w of batch) {
      const tasks = merged.tasks.slice(offset, offset + w.specs.length);
      // Each request's own share: a caller marking its repeats must not have to read its tasks back.
      const repeatOf = merged.repeatOf.slice(offset, offset + w.specs.length);
      offset += w.specs.length;
      const ids = new Set(tasks.map((t) => t.id));
      const created = repeatOf.filter((r) => r === null).length;
      w.resolve({ tasks, dispatch: merged.dispatch.filter((i) => ids.has(i.taskId)), created, repeatOf });
    }
  }
}
