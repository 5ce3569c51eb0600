/**
 * Wall-clock ↔ instant conversion in one IANA zone, the only place the cron
 * module touches offsets.
 *
 * A "wall time" is a local date-time encoded as the epoch milliseconds it
 * would have in UTC (a floating time): 2026-03-08 02:30 local is
 * Date.UTC(2026, 2, 8, 2, 30). Resolving one to instants follows the approach
 * of TC39 Temporal's GetPossibleInstantsFor: try the offsets in force a day
 * before and a day after, keep the candidates that really show that wall time.
 * That assumes a zone changes its offset at most once within two days, which
 * holds for every zone in the tz database since 1970.
 */
import { IANAZone } from "luxon";

const DAY_MS = 86_400_000;

/** How one wall time maps to real instants. */
export type WallResolution =
  /** The usual case: exactly one instant shows this wall time. */
  | { kind: "unique"; instant: number }
  /** Fall-back overlap: the wall time occurs twice, `earlier` then `later`. */
  | { kind: "repeated"; earlier: number; later: number }
  /** Spring-forward gap: no instant shows this wall time; `gapEnd` is the first instant after the gap. */
  | { kind: "skipped"; gapEnd: number };

export class ZoneClock {
  readonly #zone: IANAZone;
  /** Last gap end found: every wall time of one gap resolves to it, so the binary search runs once per gap. */
  #lastGapEnd: number | null = null;

  /** `timezone` must already be validated (IANAZone.isValidZone). */
  constructor(timezone: string) {
    this.#zone = IANAZone.create(timezone);
  }

  /** UTC offset in force at `instant`, in milliseconds (east positive). */
  offsetMs(instant: number): number {
    return this.#zone.offset(instant) * 60_000;
  }

  /** The local wall time shown at `instant`. */
  wallOf(instant: number): number {
    return instant + this.offsetMs(instant);
  }

  /**
   * The first instant in (from, from + DAY_MS] whose offset differs from the
   * one in force at `from`, or null when the offset a day later is the same
   * (at most one change within two days, as everywhere in this module).
   */
  nextOffsetChange(from: number): number | null {
    const before = this.offsetMs(from);
    if (this.offsetMs(from + DAY_MS) === before) return null;
    let same = from;
    let changed = from + DAY_MS;
    while (changed - same > 1) {
      const mid = same + Math.floor((changed - same) / 2);
      if (this.offsetMs(mid) === before) same = mid;
      else changed = mid;
    }
    return changed;
  }

  resolve(wall: number): WallResolution {
    const a = this.offsetMs(wall - DAY_MS);
    const b = this.offsetMs(wall + DAY_MS);
    // The larger offset gives the earlier instant.
    const earlier = wall - Math.max(a, b);
    const later = wall - Math.min(a, b);
    const earlierShows = this.wallOf(earlier) === wall;
    const laterShows = earlier !== later && this.wallOf(later) === wall;
    if (earlierShows && laterShows) return { kind: "repeated", earlier, later };
    if (earlierShows) return { kind: "unique", instant: earlier };
    if (laterShows) return { kind: "unique", instant: later };
    return { kind: "skipped", gapEnd: this.#gapEnd(earlier, later, wall) };
  }

  /**
   * The first instant whose wall time is at or past `wall`, searched in
   * (lo, hi]: `lo` (wall − post-gap offset) still shows a time before the gap,
   * `hi` (wall − pre-gap offset) one after it.
   */
  #gapEnd(lo: number, hi: number, wall: number): number {
    const cached = this.#lastGapEnd;
    if (cached !== null && cached > lo && cached <= hi && this.wallOf(cached) >= wall && this.wallOf(cached - 1) < wall) {
      return cached;
    }
    let below = lo;
    let atOrAbove = hi;
    while (atOrAbove - below > 1) {
      const mid = below + Math.floor((atOrAbove - below) / 2);
      if (this.wallOf(mid) >= wall) atOrAbove = mid;
      else below = mid;
    }
    this.#lastGapEnd = atOrAbove;
    return atOrAbove;
  }
}
