/**
 * Eager hand-off: tasks submitted to a PULL queue while a leaseTasks call of
 * that queue long-polls on this gateway go straight to that call, which then
 * starts them by id. Without it, a submission rang the queue's doorbell
 * through Redis, and the woken call looked for work in the queue's lanes:
 * one more hop and one more statement between the submitter's answer and the
 * worker's, on a path where every hop waits its turn for a core (npm run
 * bench, scenario 4). Temporal's eager activity dispatch works the same way.
 *
 * A hand-off is a hint, never the only way to a task: a task handed to a call
 * that then cannot start it (its client went away, the statement failed) is
 * rung for by that call, and any task not handed is rung for by the
 * submission as before. Whatever happens, the task stays QUEUED in Postgres
 * until a conditional start takes it.
 */

/** A lease call's place in its queue's line while it waits. */
export interface HandOffSlot {
  /** Aborts once tasks have been handed to this call (wake the wait with it). */
  readonly signal: AbortSignal;
  /** Leaves the line: the ids handed meanwhile, or null when none were. Call once. */
  leave(): string[] | null;
}

interface Waiter {
  capacity: number;
  handed: string[] | null;
  wake: AbortController;
}

/** A submitted task that a waiting lease call could take. */
export interface HandOffCandidate {
  id: string;
  queueId: string;
}

export class WaitingLeases {
  /** Per queue id, its waiting calls, longest waiting first. */
  readonly #lines = new Map<string, Waiter[]>();

  /** `onHandOff`: told how many tasks each offer handed (a metric). */
  constructor(private readonly onHandOff: (count: number) => void = () => undefined) {}

  /** Joins the queue's line for up to `capacity` tasks (the call's max). */
  join(queueId: string, capacity: number): HandOffSlot {
    const waiter: Waiter = { capacity, handed: null, wake: new AbortController() };
    const line = this.#lines.get(queueId);
    if (line) line.push(waiter);
    else this.#lines.set(queueId, [waiter]);
    return {
      signal: waiter.wake.signal,
      leave: () => {
        if (waiter.handed !== null) return waiter.handed;
        const current = this.#lines.get(queueId);
        const at = current?.indexOf(waiter) ?? -1;
        if (current && at >= 0) {
          current.splice(at, 1);
          if (current.length === 0) this.#lines.delete(queueId);
        }
        return null;
      },
    };
  }

  /**
   * Hands as many of these tasks as the waiting calls of their queues can
   * take, in order, longest waiting call first; answers the tasks left over
   * (for the doorbell).
   */
  offer<T extends HandOffCandidate>(tasks: readonly T[]): T[] {
    const left: T[] = [];
    const byQueue = new Map<string, T[]>();
    for (const task of tasks) {
      if (this.#lines.has(task.queueId)) byQueue.set(task.queueId, [...(byQueue.get(task.queueId) ?? []), task]);
      else left.push(task);
    }
    let handed = 0;
    for (const [queueId, queued] of byQueue) {
      const line = this.#lines.get(queueId) as Waiter[];
      let next = 0;
      while (next < queued.length && line.length > 0) {
        const waiter = line.shift() as Waiter;
        const share = queued.slice(next, next + waiter.capacity);
        next += share.length;
        waiter.handed = share.map((t) => t.id);
        waiter.wake.abort();
      }
      handed += next;
      left.push(...queued.slice(next));
      if (line.length === 0) this.#lines.delete(queueId);
    }
    if (handed > 0) this.onHandOff(handed);
    return left;
  }
}
