/**
 * Which due occurrences of a schedule to run when the scheduler catches up
 * (contract: MisfirePolicy).
 *
 * An occurrence is on time when it is at most `graceMs` old at `now`; on-time
 * occurrences always fire, whatever the policy. Older ones are missed
 * (scheduler down, schedule paused and resumed, a long stall):
 * - SKIP: every missed occurrence goes to `skip` (recorded as a SKIPPED run).
 * - FIRE_ONCE: the latest missed occurrence fires and stands in for the
 *   others, which go to `coalesced`: they are not runs of their own, so
 *   nothing is recorded for them ("one run on recovery for all missed
 *   occurrences"). An on-time occurrence due at the same tick still fires
 *   separately: it was not missed.
 * - CATCH_UP: every missed occurrence fires, oldest first, at most
 *   MAX_CATCH_UP_RUNS of them; when there are more, the most recent ones fire
 *   and the older rest go to `skip` (recorded as SKIPPED, so the gap is
 *   visible rather than silent).
 * Every due occurrence lands in exactly one of fire / skip / coalesced, so the
 * caller can advance next_run_at past all of them.
 */
import { assertNever } from "../assert-never.js";
import { MisfirePolicy } from "../statuses.js";

/**
 * Default grace: 30 s. The scheduler ticks every ~250 ms, but a tick can be
 * late by a GC pause, a slow Postgres round trip, lock contention or a leader
 * hand-over; a normally running scheduler must never see a misfire, or a SKIP
 * schedule would silently lose runs. 30 s covers those hiccups with a wide
 * margin while staying well under the one-minute period of the most common
 * crons, so a genuinely missed minute is still recognised as missed.
 */
export const MISFIRE_GRACE_MS = 30_000;

/** Most missed occurrences CATCH_UP fires in one recovery (an outage of a per-second schedule must not flood the queue). */
export const MAX_CATCH_UP_RUNS = 1000;

export interface MisfireInput {
  policy: MisfirePolicy;
  /** Every occurrence <= now not yet fired or skipped, oldest first. */
  dueOccurrences: readonly Date[];
  now: Date;
  /** Lateness still counted as on time; MISFIRE_GRACE_MS unless the caller knows better. */
  graceMs: number;
}

export interface MisfireDecision {
  /** Occurrences to materialise as runs, oldest first. */
  fire: Date[];
  /** Occurrences to record as SKIPPED runs, oldest first. */
  skip: Date[];
  /** FIRE_ONCE only: missed occurrences covered by the one run that fires; record nothing for them. */
  coalesced: Date[];
}

export function decideMisfire({ policy, dueOccurrences, now, graceMs }: MisfireInput): MisfireDecision {
  if (!(graceMs >= 0)) throw new RangeError(`graceMs must be >= 0, got ${graceMs}`);
  const nowMs = now.getTime();
  const ordered = [...dueOccurrences].sort((a, b) => a.getTime() - b.getTime());
  // "Within grace" includes an occurrence slightly in the future (clock skew between callers): it is not late.
  const onTime = ordered.filter((d) => nowMs - d.getTime() <= graceMs);
  const missed = ordered.filter((d) => nowMs - d.getTime() > graceMs);
  switch (policy) {
    case MisfirePolicy.SKIP:
      return { fire: onTime, skip: missed, coalesced: [] };
    case MisfirePolicy.FIRE_ONCE: {
      const latest = missed.at(-1);
      return { fire: latest === undefined ? onTime : [latest, ...onTime], skip: [], coalesced: missed.slice(0, -1) };
    }
    case MisfirePolicy.CATCH_UP: {
      const cut = Math.max(0, missed.length - MAX_CATCH_UP_RUNS);
      return { fire: [...missed.slice(cut), ...onTime], skip: missed.slice(0, cut), coalesced: [] };
    }
    default:
      return assertNever(policy);
  }
}
