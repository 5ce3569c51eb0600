/**
 * Cron expressions: validation and the instants a schedule fires at.
 *
 * Syntax: 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds
 * first), as cron-parser 5 reads them: `* / , - ?`, `L` (last day / last
 * weekday of the month), `#` (nth weekday), names (JAN, MON). Day-of-month
 * and day-of-week together match either one (Vixie cron). Refused besides
 * what cron-parser refuses: other field counts, `@daily`-style macros,
 * characters outside `[0-9*\/,\-?LW#A-Za-z ]`, more than MAX_CRON_LENGTH
 * characters, `H` hash fields (their meaning depends on a seed we do not
 * store), expressions that never fire. `W` and `L-n` (Quartz's nearest
 * weekday and days before the last) are refused by name: cron-parser 5 does
 * not read them.
 *
 * Time zone semantics. The expression matches local wall-clock times in the
 * schedule's IANA zone; each matching wall time becomes a UTC instant:
 * - A wall time that exists once fires at that instant.
 * - Spring forward (a wall time that does not exist, e.g. `30 2 * * *` on
 *   2026-03-08 in America/New_York, where 02:00 EST jumps to 03:00 EDT): the
 *   run happens once, at the first instant after the gap — 03:00 EDT
 *   (07:00Z) — as Vixie cron runs "fixed-time" jobs right after the jump.
 *   Several skipped wall times of one gap collapse into that one run.
 *   cron-parser itself moves such a run by the gap's length (03:30 EDT) and,
 *   iterated from an instant inside [03:00, 03:30) EDT, drops that day's run
 *   altogether; this module does not use its zone handling at all.
 * - Fall back (a wall time that occurs twice, e.g. `30 1 * * *` on 2026-11-01
 *   in America/New_York): the run happens once, at the first occurrence
 *   (01:30 EDT, 05:30Z), never again at 01:30 EST — whatever instant the
 *   iteration starts from (cron-parser, started inside the repeated hour,
 *   fires it a second time).
 * - Exception: when the hour field matches all 24 hours (`*`, `0-23`, `*\/1`),
 *   the schedule follows real elapsed time instead: `*\/15 * * * *` fires
 *   every 15 minutes straight across either transition — both passes of a
 *   repeated hour fire, wall times inside a gap simply do not exist, and no
 *   instant is added or duplicated.
 * The occurrences form one fixed set per (expression, zone): where an
 * iteration starts never changes them, so nextOccurrence(after = a previous
 * occurrence) and nextOccurrence(after = now) agree — which the scheduler's
 * compare-and-set on next_run_at relies on.
 *
 * Implementation: cron-parser runs in UTC over floating wall times (where it
 * has no DST to get wrong); ZoneClock maps each wall time to instants, or,
 * for every-hour expressions, gives the stretches of constant offset over
 * which wall time is instant + offset. Either way a call costs a few
 * cron-parser steps per occurrence, near a transition too (cron-cost.test.ts).
 */
import { type CronExpression, CronExpressionParser } from "cron-parser";
import { IANAZone } from "luxon";
import { BadUserInputError, type FieldError } from "../errors.js";
import { ZoneClock } from "./zone-clock.js";

/** Longest cron expression accepted; real ones are far shorter. */
export const MAX_CRON_LENGTH = 120;
/** Longest time zone name accepted (the longest IANA name is about 30). */
const MAX_TIMEZONE_LENGTH = 64;

const CRON_CHARACTERS = /^[0-9*/,\-?LW#A-Za-z ]*$/;
/** Area/Location[/Sublocation], or a single name such as UTC or EST5EDT; refuses offsets like "+05:30". */
const TIMEZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;
/** Any fixed start date will do: validation only asks whether the expression ever fires. */
const PROBE_START = Date.UTC(2000, 0, 1);

function parseFloating(expression: string, afterWall: number) {
  return CronExpressionParser.parse(expression, { currentDate: new Date(afterWall), tz: "UTC" });
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

type Parsed = { ok: true; expression: CronExpression } | { ok: false; problem: string };

/** Syntax checks; does not ask whether the expression ever fires. */
function parseSyntax(expression: string): Parsed {
  const fail = (problem: string): Parsed => ({ ok: false, problem });
  if (expression.length > MAX_CRON_LENGTH) return fail(`must be at most ${MAX_CRON_LENGTH} characters`);
  if (!CRON_CHARACTERS.test(expression)) return fail("may only contain digits, letters, spaces and * / , - ? L W #");
  const fields = expression.trim().split(/ +/).filter((f) => f.length > 0);
  if (fields.length !== 5 && fields.length !== 6) {
    return fail("must have 5 fields (minute hour day-of-month month day-of-week) or 6 (seconds first)");
  }
  // THU is the only name with an H; any other H is cron-parser's hash syntax.
  if (fields.some((f) => /H/i.test(f.replace(/THU/gi, "")))) return fail("must not use H (hashed) values");
  // cron-parser refuses these too, in words that do not say what is wrong ("Invalid characters, got
  // value: 15W", "got range NaN-2"). WED is the only name with a W.
  if (fields.some((f) => /W/i.test(f.replace(/WED/gi, "")))) return fail("must not use W (nearest weekday): list the days instead");
  // L-n is a day-of-month form only: JUL-DEC in the month field is a range of names.
  if (/L-/i.test(fields[fields.length - 3] ?? "")) return fail("must not use L-n (days before the last of the month): L alone is the last day");
  try {
    return { ok: true, expression: parseFloating(expression, PROBE_START) };
  } catch (e: unknown) {
    return fail(cronParserProblem(messageOf(e)));
  }
}

/** cron-parser's refusal in the API's words where its own do not say what is wrong. */
function cronParserProblem(message: string): string {
  // Its check that some month of the month field has the day-of-month field's days (0 0 30 2 *).
  if (message === "Invalid explicit day of month definition") {
    return "never matches a date: no month in the month field has a day in the day-of-month field (February has at most 29 days; April, June, September and November 30)";
  }
  return `is not a valid cron expression: ${message}`;
}

/** What is wrong with the cron expression (syntax, or it never fires), or null when it is valid. */
export function cronExpressionProblem(expression: string): string | null {
  const parsed = parseSyntax(expression);
  if (!parsed.ok) return parsed.problem;
  try {
    parsed.expression.next();
    return null;
  } catch {
    // cron-parser already refuses impossible dates (0 0 30 2 *) when parsing;
    // this catches anything its search limit cannot reach, reported by throwing.
    return "never matches a date";
  }
}

/**
 * Zone names found valid. IANAZone.isValidZone builds an Intl.DateTimeFormat
 * (about 0.5 ms); the scheduler asks for the same few zones all the time.
 * Only valid names enter, and at most MAX_CACHED_ZONES of them (case variants
 * of real names are valid too, so the bound is explicit).
 */
const validZones = new Set<string>();
const MAX_CACHED_ZONES = 1000;

function isValidZone(timezone: string): boolean {
  if (validZones.has(timezone)) return true;
  if (!IANAZone.isValidZone(timezone)) return false;
  if (validZones.size < MAX_CACHED_ZONES) validZones.add(timezone);
  return true;
}

/** What is wrong with the IANA time zone name, or null when it is valid. */
export function timezoneProblem(timezone: string): string | null {
  if (timezone.length === 0) return "must not be empty";
  if (timezone.length > MAX_TIMEZONE_LENGTH || !TIMEZONE_NAME.test(timezone) || !isValidZone(timezone)) {
    return "must be an IANA time zone name such as Europe/Berlin or UTC";
  }
  return null;
}

/** One error for the problems found (at least one is non-null), worded like parseInput's. */
function cronInputError(cronProblem: string | null, zoneProblem: string | null): BadUserInputError {
  const fieldErrors: FieldError[] = [];
  if (cronProblem !== null) fieldErrors.push({ path: "cron", message: cronProblem });
  if (zoneProblem !== null) fieldErrors.push({ path: "timezone", message: zoneProblem });
  const [first] = fieldErrors;
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : "";
  return new BadUserInputError(`Invalid ${first?.path ?? "input"}: ${first?.message ?? "invalid value"}${more}`, fieldErrors);
}

/** Throws BadUserInputError (fieldErrors on "cron" and/or "timezone") unless both are valid and the expression fires. */
export function validateCron(expression: string, timezone: string): void {
  const cron = cronExpressionProblem(expression);
  const zone = timezoneProblem(timezone);
  if (cron !== null || zone !== null) throw cronInputError(cron, zone);
}

interface CompiledCron {
  /** Parsed in UTC, iterated over floating wall times. */
  cron: CronExpression;
  clock: ZoneClock;
  /** The hour field matches all 24 hours: follow elapsed time across DST changes. */
  everyHour: boolean;
}

/** Syntax and zone only: the occurrence functions tolerate an expression that never fires (they return nothing). */
function compile(expression: string, timezone: string): CompiledCron {
  const parsed = parseSyntax(expression);
  const zone = timezoneProblem(timezone);
  if (!parsed.ok || zone !== null) {
    throw cronInputError(parsed.ok ? null : parsed.problem, zone);
  }
  const cron = parsed.expression;
  return { cron, clock: new ZoneClock(timezone), everyHour: cron.fields.hour.values.length === 24 };
}

/** The next matching wall time after the iterator's position, or null when the expression fires no more. */
function nextWall(cron: CronExpression): number | null {
  try {
    return cron.next().getTime();
  } catch {
    // The expression parsed, so this is cron-parser's "no further date
    // within its search limit"; its own hasNext() reads errors the same way.
    return null;
  }
}

/** Offsets stay within a day of UTC: an instant showing a wall time at or past `w` is later than w − DAY_MS. */
const DAY_MS = 86_400_000;

/**
 * Fixed-hour expressions: each matching wall time fires once, at its first
 * instant (the gap's end for a wall time that does not exist). Those instants
 * never decrease as wall times increase, so no wall time before wall(after)
 * can fire after `after`, and every wall time of a gap resolves to its end:
 * the iteration starts at wall(after) and jumps over a gap at once. (It used
 * to start a whole offset change early for a day before each fall back and
 * walk each gap wall time by wall time: 3,600 steps, ~150 ms, per call for a
 * per-second expression, which the scheduler makes on every pass.)
 */
function* fixedHourOccurrences({ cron, clock }: CompiledCron, after: number): Generator<number> {
  let last = after;
  cron.reset(new Date(clock.wallOf(after) - 1));
  for (let wall = nextWall(cron); wall !== null; wall = nextWall(cron)) {
    const r = clock.resolve(wall);
    const main = r.kind === "unique" ? r.instant : r.kind === "repeated" ? r.earlier : r.gapEnd;
    if (main > last) yield (last = main);
    // Never back to `wall` itself: the iteration moves forward whatever the zone data says.
    if (r.kind === "skipped") cron.reset(new Date(Math.max(wall, clock.wallOf(r.gapEnd) - 1)));
  }
}

/**
 * Every-hour expressions follow elapsed time: an instant fires when the wall
 * time it shows matches, so both passes of a repeated wall time fire and a
 * wall time inside a gap never does. Between two offset changes wall time is
 * instant + offset, so the iteration goes one constant-offset stretch at a
 * time (at most a day, so a change ahead is always seen), and never looks at
 * a wall time that cannot fire.
 */
function* elapsedOccurrences({ cron, clock }: CompiledCron, after: number): Generator<number> {
  // Instants from `from` on, under the offset in force at `from`, until `end`.
  for (let from = after + 1; ; ) {
    const offset = clock.offsetMs(from);
    const change = clock.nextOffsetChange(from);
    const end = change ?? from + DAY_MS;
    cron.reset(new Date(from + offset - 1));
    let wall = nextWall(cron);
    for (; wall !== null && wall - offset < end; wall = nextWall(cron)) yield wall - offset;
    if (wall === null) return;
    // Past the stretch: at its offset change, or with no change ahead straight to
    // the day before the next match (a rare date years away is not walked to a day at a time).
    from = change ?? Math.max(end, wall - DAY_MS);
  }
}

/** Occurrences strictly after `after`, ascending, without end. */
function occurrencesAfter(compiled: CompiledCron, after: number): Generator<number> {
  return compiled.everyHour ? elapsedOccurrences(compiled, after) : fixedHourOccurrences(compiled, after);
}

function assertInstant(name: string, d: Date): number {
  const ms = d.getTime();
  if (Number.isNaN(ms)) throw new RangeError(`${name} is not a valid Date`);
  return ms;
}

function assertCount(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${name} must be a non-negative integer, got ${n}`);
}

/**
 * The next `count` occurrences strictly after `after`, ascending (fewer only
 * if the expression stops firing). Throws BadUserInputError for an invalid
 * expression or zone, RangeError for a bad `after` or `count`.
 */
export function nextOccurrences(expression: string, timezone: string, after: Date, count: number): Date[] {
  const compiled = compile(expression, timezone);
  const afterMs = assertInstant("after", after);
  assertCount("count", count);
  const out: Date[] = [];
  if (count === 0) return out;
  for (const instant of occurrencesAfter(compiled, afterMs)) {
    out.push(new Date(instant));
    if (out.length >= count) break;
  }
  return out;
}

/** The first occurrence strictly after `after`, or null when the expression never fires again. */
export function nextOccurrence(expression: string, timezone: string, after: Date): Date | null {
  return nextOccurrences(expression, timezone, after, 1)[0] ?? null;
}

/**
 * Occurrences in (afterExclusive, untilInclusive], ascending, at most `cap`:
 * the oldest `cap` when there are more, so `result.length === cap` means
 * "maybe truncated; continue after the last one".
 */
export function occurrencesBetween(
  expression: string,
  timezone: string,
  afterExclusive: Date,
  untilInclusive: Date,
  cap: number,
): Date[] {
  const compiled = compile(expression, timezone);
  const afterMs = assertInstant("afterExclusive", afterExclusive);
  const untilMs = assertInstant("untilInclusive", untilInclusive);
  assertCount("cap", cap);
  const out: Date[] = [];
  if (cap === 0 || untilMs <= afterMs) return out;
  for (const instant of occurrencesAfter(compiled, afterMs)) {
    if (instant > untilMs) break;
    out.push(new Date(instant));
    if (out.length >= cap) break;
  }
  return out;
}
