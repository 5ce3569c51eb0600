/**
 * Which task events the relay may publish now, so that subscribers see events
 * in id order with none skipped. The pure half of the relay (no I/O).
 *
 * Why ids alone are not enough: a bigserial id is drawn when a row is
 * inserted, not when its transaction commits. Transaction T can draw id 100,
 * U draw 101 and commit first; a reader then sees 101 but not 100. Moving the
 * cursor past 101 would lose 100 for good once T commits. So the relay only
 * advances over contiguous ids; at a hole it stops and waits until every
 * transaction that was running when the hole was seen has finished (the
 * snapshot's in-progress list). Then the hole is final: a rolled-back insert,
 * or sequence values lost in a crash, and the relay steps over it.
 *
 * That rule relies on one invariant of the writers (submit-tasks.ts and the
 * transitions): each statement writes `tasks` before it inserts into
 * task_events, so the writer already has a transaction id when it draws an
 * event id and shows up in the in-progress list of any snapshot taken after.
 */
import type { TaskStatus } from "@tasklane/core";

/** One task_events row as the relay reads it (the task's queue and workflow joined in). */
export interface TaskEventRow {
  /** bigserial, as a decimal string (pg returns int8 as text). */
  id: string;
  taskId: string;
  tenantId: string;
  /** Null only if the task row is gone (events cascade with it, so practically never). */
  queueId: string | null;
  workflowId: string | null;
  fromStatus: TaskStatus | null;
  toStatus: TaskStatus;
  at: Date;
}

/** One row of a relay read, in id order. */
export interface WindowRow {
  id: string;
  /**
   * The id of the event just before this one in the read, or the cursor the
   * read started after: every id in between is missing. Rows left out of the
   * answer lie between this and the row before it, so none of them has a hole.
   */
  prevId: string;
  /** The event, to publish; null for a row answered only to place the cursor (its tenant has no listeners). */
  event: TaskEventRow | null;
}

/** A hole in the ids, and the snapshot in which it was first seen. */
export interface PendingGap {
  /** First and last missing id (inclusive). */
  from: bigint;
  to: bigint;
  /** `pg_current_snapshot()` as text when the hole was first seen. */
  snapshot: string;
  /** Date.now() when first seen, for the stall guard. */
  seenAtMs: number;
}

export interface WindowInput {
  /** Last id already published. */
  cursor: bigint;
  /** Rows with id > cursor, ascending. */
  rows: readonly WindowRow[];
  /** Snapshot the rows were read in. */
  snapshot: string;
  /** The hole the previous read stopped at, if any. */
  gap: PendingGap | null;
  /** Whether `gap` has settled: no transaction in its snapshot's in-progress list is still running. */
  gapSettled: boolean;
  /** Hole older than this is stepped over even if unsettled (a long unrelated transaction must not stall every tenant). */
  maxGapWaitMs: number;
  nowMs: number;
}

export interface WindowResult {
  /** Publish these, in this order. */
  publish: TaskEventRow[];
  /** New cursor: the last id published or stepped over. */
  cursor: bigint;
  /** The hole the walk stopped at; null when it reached the end of `rows`. */
  gap: PendingGap | null;
  /** Holes stepped over, for logging: [from, to, whether by timeout]. */
  skipped: Array<{ from: bigint; to: bigint; forced: boolean }>;
}

function covers(gap: PendingGap | null, from: bigint, to: bigint): gap is PendingGap {
  return gap !== null && gap.from <= from && to <= gap.to;
}

export function planRelayWindow(input: WindowInput): WindowResult {
  const publish: TaskEventRow[] = [];
  const skipped: WindowResult["skipped"] = [];
  let cursor = input.cursor;
  for (const row of input.rows) {
    const id = BigInt(row.id);
    if (id <= cursor) continue;
    // The ids up to prevId were read without a hole, just not handed over.
    const prev = BigInt(row.prevId);
    if (prev > cursor) cursor = prev;
    if (id > cursor + 1n) {
      const from = cursor + 1n;
      const to = id - 1n;
      // Ids in [from, to] were all drawn before `id`, which was visible when the
      // earlier gap was recorded, so an earlier observation covering them still applies.
      if (covers(input.gap, from, to)) {
        const forced = !input.gapSettled;
        if (input.gapSettled || input.nowMs - input.gap.seenAtMs >= input.maxGapWaitMs) {
          skipped.push({ from, to, forced });
        } else {
          return { publish, cursor, gap: input.gap, skipped };
        }
      } else {
        return { publish, cursor, gap: { from, to, snapshot: input.snapshot, seenAtMs: input.nowMs }, skipped };
      }
    }
    if (row.event !== null) publish.push(row.event);
    cursor = id;
  }
  return { publish, cursor, gap: null, skipped };
}
