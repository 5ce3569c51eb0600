/**
 * The contract's two scalars. DateTime is our own rather than graphql-scalars'
 * (whose `DateTime` serialises to a Date object and whose ISO variant is named
 * `DateTimeISO`): output is always UTC with milliseconds, and input must name
 * its offset so a run time is never read in the server's local zone.
 */
import { GraphQLScalarType, Kind } from "graphql";
import { GraphQLJSON } from "graphql-scalars";
import { LRUCache } from "lru-cache";
import { BadUserInputError } from "@tasklane/core";

const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/** Postgres has no year 0: an earlier instant fails the statement that stores it. */
const EARLIEST = Date.parse("0001-01-01T00:00:00Z");

/** Days in `month` (1-12) of `year`; setUTCFullYear, unlike Date.UTC, leaves years 0-99 as they are. */
function daysInMonth(year: number, month: number): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/**
 * Each field in its range before the string becomes a Date: `new Date` rolls
 * an impossible day over (2027-04-31 becomes May 1st) where the caller meant
 * something else, so such a date is refused rather than moved.
 */
function parseDateTime(value: unknown): Date {
  const fields = typeof value === "string" ? ISO_WITH_OFFSET.exec(value) : null;
  if (typeof value !== "string" || fields === null) {
    throw new BadUserInputError(`DateTime must be an ISO-8601 string with a time zone offset, e.g. 2030-01-01T00:00:00.000Z`);
  }
  const field = (group: number) => Number(fields[group] ?? 0);
  const month = field(2);
  const day = field(3);
  const date = new Date(value);
  const valid =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(field(1), month) &&
    field(4) <= 23 && // hour
    field(5) <= 59 && // minute
    field(6) <= 59 && // second
    field(7) <= 23 && // offset hours
    field(8) <= 59 && // offset minutes
    !Number.isNaN(date.getTime());
  if (!valid) throw new BadUserInputError(`DateTime is not a valid date: ${value.slice(0, 40)}`);
  if (date.getTime() < EARLIEST) throw new BadUserInputError(`DateTime must be in year 1 or later: ${value.slice(0, 40)}`);
  return date;
}

/**
 * The last few instants written, and how. `toISOString` costs ~0.4 µs, and a
 * batch answer repeats a handful of instants over and over (a 100-task lease:
 * one created_at, run_at, started_at and lease expiry for all): it was 5% of
 * a lease call's gateway CPU.
 */
const recentlyWritten = new LRUCache<number, string>({ max: 16, memoMethod: (ms) => new Date(ms).toISOString() });

export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: "DateTime",
  description: "ISO-8601 date-time; UTC with milliseconds on output, an explicit offset on input",
  serialize(value: unknown): string {
    const date = value instanceof Date ? value : typeof value === "string" || typeof value === "number" ? new Date(value) : null;
    if (date === null || Number.isNaN(date.getTime())) throw new TypeError("DateTime cannot represent this value");
    return recentlyWritten.memo(date.getTime());
  },
  parseValue: parseDateTime,
  parseLiteral(ast) {
    if (ast.kind !== Kind.STRING) throw new BadUserInputError("DateTime must be a string");
    return parseDateTime(ast.value);
  },
});

export const JSONScalar = GraphQLJSON;
