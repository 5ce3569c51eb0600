/**
 * Which due occurrences of a schedule to run when the scheduler catches up
 * (contract: MisfirePolicy).
 *
 * An occurrence is on time when it is at most `graceMs` old at `now`; on-time
 * occurrences always fire, whatever the policy. Older ones are missed
 * (every scheduler down, a long stall; not a schedule disabled and enabled
 * again, which has no occurrences meanwhile and starts at its next one):
 * - SKIP: every missed occurrence goes to `skip` (recorded as a SKIPPED run;
 *   a long backlog's older ones summarised, below).
 * - FIRE_ONCE: the latest missed occurrence fires and stands in for the
 *   others, which go to `coalesced`: they are not runs of their own, so
 *   nothing is recorded for them ("one run on recovery for all missed
 *   occurrences"). An on-time occurrence due at the same tick still fires
 *   separately: it was not missed.
 * - CATCH_UP: every missed occurrence fires, oldest first, at most
 *   MAX_CATCH_UP_RUNS of them in one recovery; when there are more, the most
 *   recent ones fire and the older rest go to `skip` (recorded as SKIPPED, so
 *   the gap is visible rather than silent; a long backlog's older ones
 *   summarised, below).
 * Every due occurrence lands in exactly one of fire / skip / coalesced, so the
 * caller can advance next_run_at past all of them.
 *
 * A long outage is decided a window at a time (decideMisfireWindow), and the
 * cap holds for the whole recovery, not per window. So does a bound on what
 * is recorded: the windows decided before the newest MAX_CATCH_UP_RUNS missed
 * occurrences are in view (SKIP and CATCH_UP skip them whole) record one
 * SKIPPED run each, which stands for the rest of the window (MissedSummary):
 * a recovery records at most MISFIRE_WINDOW occurrences one by one, and one
 * run per MAX_CATCH_UP_RUNS older ones. Recorded one by one, a day's outage of
 * ten per-second schedules wrote 864,000 SKIPPED runs and as many events
 * (QA: two minutes of the scheduler); a tenant may have 1,000 schedules.
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

/**
 * Most occurrences of one schedule read at once (decideMisfireWindow): what a
 * pass may decide, plus MAX_CATCH_UP_RUNS behind it to see whether those are
 * older than the newest missed ones CATCH_UP keeps. 2,000 dates cost well
 * under a millisecond to compute; the rows they become are the real cost.
 */
export const MISFIRE_WINDOW = 2 * MAX_CATCH_UP_RUNS;

export interface MisfireInput {
  policy: MisfirePolicy;
  /** Every occurrence <= now not yet fired or skipped, oldest first. */
  dueOccurrences: readonly Date[];
  now: Date;
  /** Lateness still counted as on time; MISFIRE_GRACE_MS unless the caller knows better. */
  graceMs: number;
  /**
   * Missed occurrences after these (a long backlog decided a window at a
   * time); only whether it reaches MAX_CATCH_UP_RUNS matters. Default 0: these
   * are the newest missed ones.
   */
  missedAfter?: number;
}

/** A SKIPPED run that stands for older missed occurrences not recorded one by one. */
export interface MissedSummary {
  /** The recorded occurrence (one of `skip`). */
  occurrence: Date;
  /** How many missed occurrences before it it stands for (they are in `coalesced`). */
  earlier: number;
  /** The oldest of them. */
  since: Date;
}

export interface MisfireDecision {
  /** Occurrences to materialise as runs, oldest first. */
  fire: Date[];
  /** Occurrences to record as SKIPPED runs, oldest first. */
  skip: Date[];
  /** Missed occurrences not recorded: FIRE_ONCE's, covered by the one run that fires, and those a `summary` stands for. */
  coalesced: Date[];
  /** decideMisfireWindow only: the one of `skip` that stands for older missed occurrences in `coalesced`. */
  summary?: MissedSummary;
}

/**
 * The lastError (and event reason) of a run the misfire policy SKIPPED: a
 * SKIPPED run said nothing of why, so a missed occurrence looked like one
 * the overlap policy or a change skipped.
 */
export function missedReason(policy: MisfirePolicy): string {
  switch (policy) {
    case MisfirePolicy.SKIP:
      return "missed: not fired within the misfire grace (misfirePolicy SKIP)";
    case MisfirePolicy.CATCH_UP:
      return `missed: older than the newest ${MAX_CATCH_UP_RUNS.toLocaleString("en-US")} missed occurrences, which CATCH_UP runs`;
    case MisfirePolicy.FIRE_ONCE:
      return "missed: not fired within the misfire grace";
    default:
      return assertNever(policy);
  }
}

/** The lastError (and event reason) of the SKIPPED run a MissedSummary records. */
export function missedSummaryReason(summary: MissedSummary): string {
  return `missed, with the ${summary.earlier.toLocaleString("en-US")} missed occurrences before it since ${summary.since.toISOString()}, which are not recorded one by one`;
}

/** "Within grace" includes an occurrence slightly in the future (clock skew between callers): it is not late. */
const isMissed = (occurrence: Date, now: Date, graceMs: number) => now.getTime() - occurrence.getTime() > graceMs;

export function decideMisfire({ policy, dueOccurrences, now, graceMs, missedAfter = 0 }: MisfireInput): MisfireDecision {
  if (!(graceMs >= 0)) throw new RangeError(`graceMs must be >= 0, got ${graceMs}`);
  if (!(missedAfter >= 0)) throw new RangeError(`missedAfter must be >= 0, got ${missedAfter}`);
  const ordered = [...dueOccurrences].sort((a, b) => a.getTime() - b.getTime());
  const onTime = ordered.filter((d) => !isMissed(d, now, graceMs));
  const missed = ordered.filter((d) => isMissed(d, now, graceMs));
  switch (policy) {
    case MisfirePolicy.SKIP:
      return { fire: onTime, skip: missed, coalesced: [] };
    case MisfirePolicy.FIRE_ONCE: {
      // The one run stands for the latest missed occurrence, which is here only when none follow.
      const latest = missedAfter === 0 ? missed.at(-1) : undefined;
      return { fire: latest === undefined ? onTime : [latest, ...onTime], skip: [], coalesced: latest === undefined ? missed : missed.slice(0, -1) };
    }
    case MisfirePolicy.CATCH_UP: {
      // Later missed occurrences are newer, so they take the budget first.
      const budget = Math.max(0, MAX_CATCH_UP_RUNS - missedAfter);
      const cut = Math.max(0, missed.length - budget);
      return { fire: [...missed.slice(cut), ...onTime], skip: missed.slice(0, cut), coalesced: [] };
    }
    default:
      return assertNever(policy);
  }
}

export interface MisfireWindowInput extends Omit<MisfireInput, "dueOccurrences" | "missedAfter"> {
  /** A schedule's due occurrences from its next_run_at, oldest first, at most MISFIRE_WINDOW. */
  occurrences: readonly Date[];
  /** The window was cut at its size: more due occurrences follow the last one. */
  more: boolean;
}

export interface MisfireWindowDecision extends MisfireDecision {
  /** How many of the window's occurrences (the oldest) are decided; the caller moves next_run_at past them and decides the rest later. */
  decided: number;
}

/**
 * A decision over missed occurrences all older than the newest
 * MAX_CATCH_UP_RUNS (nothing fires): its latest skipped occurrence is
 * recorded and stands for the others, which join `coalesced`.
 */
function summariseSkipped(d: MisfireDecision): MisfireDecision {
  const recorded = d.skip.at(-1);
  const [since] = d.skip;
  if (recorded === undefined || since === undefined || d.skip.length === 1) return d;
  const earlier = d.skip.slice(0, -1);
  return {
    fire: d.fire,
    skip: [recorded],
    coalesced: [...d.coalesced, ...earlier].sort((a, b) => a.getTime() - b.getTime()),
    summary: { occurrence: recorded, earlier: earlier.length, since },
  };
}

/**
 * Decides a long backlog a window at a time without ever firing more than
 * MAX_CATCH_UP_RUNS missed occurrences for it. While the window is missed
 * throughout and more follow, only its part older than its last
 * MAX_CATCH_UP_RUNS is decided: at least that many newer missed occurrences
 * exist, so CATCH_UP and SKIP skip it whole, recording one SKIPPED run for it
 * (summariseSkipped), and FIRE_ONCE coalesces it. Once the
 * window reaches past the missed range, all of it is decided at once, so the
 * newest missed occurrences are counted against one budget at one `now`
 * (deciding them over two passes would let occurrences that turned late in
 * between draw on the budget again).
 */
export function decideMisfireWindow({ occurrences, more, ...input }: MisfireWindowInput): MisfireWindowDecision {
  const last = occurrences.at(-1);
  if (more && last !== undefined && isMissed(last, input.now, input.graceMs)) {
    if (occurrences.length <= MAX_CATCH_UP_RUNS) throw new RangeError(`a window cut short must hold more than ${MAX_CATCH_UP_RUNS} occurrences, got ${occurrences.length}`);
    const decided = occurrences.slice(0, occurrences.length - MAX_CATCH_UP_RUNS);
    return { ...summariseSkipped(decideMisfire({ ...input, dueOccurrences: decided, missedAfter: MAX_CATCH_UP_RUNS })), decided: decided.length };
  }
  return { ...decideMisfire({ ...input, dueOccurrences: occurrences }), decided: occurrences.length };
}
