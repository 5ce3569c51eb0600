import type pg from "pg";
import type { Database } from "../database.js";
import { prepared } from "../prepared-statement.js";

const DELETE_OUTBOX_ROW = "DELETE FROM outbox WHERE id = $1::bigint";

/** Fast path: the writer enqueued these itself right after its commit. */
export async function deleteOutboxRows(db: Pick<Database, "pool">, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  // One row gets its own statement, prepared: `id = ANY($1)` is planned again on every call (~40 µs
  // of Postgres's CPU, twice what deleting the row costs), unnamed or named, since its custom plan for
  // a one-element array always looks cheaper than a generic plan for an array of unknown length.
  // Rows gathered from several writes share that planning.
  const unique = [...new Set(ids)];
  if (unique.length === 1) await db.pool.query(prepared(DELETE_OUTBOX_ROW, unique));
  else await db.pool.query("DELETE FROM outbox WHERE id = ANY($1::bigint[])", [unique]);
}

/**
 * How long a dispatched row may wait for company before its delete goes out.
 * Far inside the outbox dispatcher's 2 s grace, so it never re-dispatches a
 * row only because its delete was waiting.
 */
const GATHER_MS = 20;

/**
 * Deletes the outbox rows of fast-path dispatches after the fact, gathered:
 * a submission is answered once its tasks are in Redis, without waiting for
 * one more statement and commit, and the rows of many submissions go in one
 * statement (a statement costs Postgres a few hundred µs before its first
 * row). One delete is out at a time; rows added meanwhile wait for the next.
 *
 * Losing a pending delete (a crash, Postgres away) loses nothing: the row
 * stays, and the scheduler's outbox dispatcher dispatches its tasks again
 * once it is past the grace, which the job ids make harmless.
 */
export class DeferredOutboxDeletes {
  private pending = new Map<string, (error: unknown) => void>();
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;

  constructor(private readonly pool: pg.Pool) {}

  /**
   * Deletes these rows soon. `onError` hears a failed delete, as an error that
   * says the tasks were dispatched and only their rows are left (for the
   * dispatcher, which sends them again); each distinct `onError` hears it once.
   */
  add(ids: readonly string[], onError: (error: unknown) => void): void {
    if (ids.length === 0) return;
    for (const id of ids) this.pending.set(id, onError);
    if (this.timer === undefined && this.inFlight === undefined) this.timer = setTimeout(() => this.send(), GATHER_MS).unref();
  }

  /** Sends what is pending now and waits until no delete is out (shutdown). */
  async flush(): Promise<void> {
    while (this.inFlight !== undefined || this.pending.size > 0) {
      if (this.inFlight === undefined) this.send();
      await this.inFlight;
    }
  }

  private send(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = new Map();
    this.inFlight = deleteOutboxRows({ pool: this.pool }, [...batch.keys()])
      .catch((cause: unknown) => {
        const error = new Error("Dispatched, but the outbox rows could not be deleted; the outbox dispatcher will dispatch them again", { cause });
        for (const onError of new Set(batch.values())) {
          try {
            onError(error);
          } catch {
            // A reporter that throws must not leave this batch's promise rejected with nobody awaiting it.
          }
        }
      })
      .finally(() => {
        this.inFlight = undefined;
        if (this.pending.size > 0) this.timer = setTimeout(() => this.send(), GATHER_MS).unref();
      });
  }
}
