/**
 * Local input checks with the same zod schemas the gateway uses (from
 * @tasklane/core), so a bad input fails before a round trip with the same
 * BAD_USER_INPUT and fieldErrors. The gateway stays the authority: it may
 * refuse what passes here (e.g. a DateTime without an offset).
 */
import { BadUserInputError } from "@tasklane/core/errors";
import { assertJsonWithin } from "@tasklane/core/json-limits";
import { MAX_JSON_DEPTH, MAX_RESULT_BYTES } from "@tasklane/core/limits";
import { TasklaneError } from "./errors.js";
import { isUnstorable } from "./storable-text.js";
import type { DateTimeInput } from "./types.js";

export function checkLocally(operation: string, check: () => unknown): void {
  try {
    check();
  } catch (e: unknown) {
    if (e instanceof BadUserInputError) {
      throw new TasklaneError(e.code, `${operation}: ${e.message}`, { cause: e, extensions: { ...e.extensions, code: e.code }, operation });
    }
    throw e;
  }
}

/**
 * A task result as the gateway would check it, and what it cannot see: JSON
 * encoding turns NaN and Infinity into null before the request leaves, and
 * a function, a symbol or a Map into null or {} (resultLoss). Strings the
 * gateway would refuse are refused here too, so one such result does not
 * take a batched completeTasks call down with it.
 */
export function checkResult(operation: string, result: unknown, path = "result"): void {
  checkLocally(operation, () => {
    assertJsonWithin(result, { maxBytes: MAX_RESULT_BYTES, maxDepth: MAX_JSON_DEPTH, path });
    const loss = resultLoss(result);
    if (loss !== null) throw new BadUserInputError(`${path} ${loss}`, [{ path, message: loss }]);
    const at = unstorableTextAt(result);
    if (at !== null) {
      const where = at === "" ? path : `${path}.${at}`;
      throw new BadUserInputError(`${path} must not contain NUL (U+0000) or unpaired surrogate characters (at ${where})`, [{ path: where, message: "must not contain NUL (U+0000) or unpaired surrogate characters" }]);
    }
  });
}

/**
 * Why a whole result would arrive as null or {} though the handler returned
 * something, or null. JSON.stringify drops a function or a symbol (the
 * result becomes null) and encodes an instance with no enumerable fields and
 * no toJSON (a Map, a Set, a Promise, an Error) as {}: almost surely a
 * handler's mistake (`return res.json` for `res.json()`, a missing await),
 * and one that would otherwise SUCCEED with nothing in it. Only the value
 * itself is judged: nested functions are what JSON drops from objects built
 * by libraries (a response's config, say), which handlers return today.
 */
function resultLoss(result: unknown): string | null {
  const value = hasToJSON(result) ? result.toJSON("") : result;
  if (typeof value === "function") return "must be JSON: it is a function, which JSON drops (was it meant to be called?)";
  if (typeof value === "symbol") return "must be JSON: it is a symbol, which JSON drops";
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === Object.prototype || proto === null) return null;
  // Boxed primitives encode as their value.
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return null;
  if (Object.keys(value).length > 0) return null;
  const name = typeof value.constructor === "function" && value.constructor.name !== "" ? value.constructor.name : "a class";
  const hint = value instanceof Promise ? " (was it meant to be awaited?)" : value instanceof Error ? " (throw it to fail the attempt)" : "";
  return `must be JSON: it is an instance of ${name}, which JSON encodes as {}${hint}`;
}

function hasToJSON(value: unknown): value is { toJSON(key: string): unknown } {
  return value !== null && typeof value === "object" && typeof (value as { toJSON?: unknown }).toJSON === "function";
}

/**
 * The dotted path of the first string or key holding NUL or an unpaired
 * surrogate ("" for the value itself), as encoding would see it (toJSON
 * applied), or null. Runs on every completion, so a clean result allocates
 * nothing: the path is gathered on the way back from a hit only. Recursion
 * stops below the depth the gateway allows (deeper is refused for depth).
 */
function unstorableTextAt(value: unknown): string | null {
  const found = textHit(value, "", 0);
  return found === null ? null : found.reverse().join(".");
}

/** The keys from the hit up to `value` (innermost first), or null. */
function textHit(value: unknown, key: string, depth: number): string[] | null {
  const current = hasToJSON(value) ? value.toJSON(key) : value;
  if (typeof current === "string") return isUnstorable(current) ? [] : null;
  if (current === null || typeof current !== "object" || depth > MAX_JSON_DEPTH) return null;
  if (Array.isArray(current)) {
    for (let i = 0; i < current.length; i++) {
      const found = textHit(current[i], String(i), depth + 1);
      if (found !== null) return (found.push(String(i)), found);
    }
    return null;
  }
  const record = current as Record<string, unknown>;
  for (const k in record) {
    if (!Object.prototype.hasOwnProperty.call(record, k)) continue;
    // A refused key is named by its object's path, never echoed.
    if (isUnstorable(k)) return [];
    const found = textHit(record[k], k, depth + 1);
    if (found !== null) return (found.push(k), found);
  }
  return null;
}

/** The API's DateTime: an offset (Z or ±hh:mm) is required, so a time is never read in some machine's local zone. */
const DATE_TIME_WITH_OFFSET = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;

/**
 * What the zod schemas expect for a DateTime (a Date). A string without an offset or that is
 * no date, and an invalid Date, are refused here, naming `path`: `new Date` would read the first
 * in this machine's zone, and the schemas name neither ("expected date, received Date").
 */
export function asDate(value: DateTimeInput | null | undefined, path = "runAt"): Date | null | undefined {
  if (value == null) return value;
  if (!(value instanceof Date) && !(typeof value === "string" && DATE_TIME_WITH_OFFSET.test(value))) {
    throw badDateTime(path, "must be a Date or an ISO-8601 string with a time zone offset, e.g. 2030-01-01T00:00:00.000Z");
  }
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw badDateTime(path, value instanceof Date ? "is an invalid Date" : "is not a valid date");
  return date;
}

/** What the API expects for a DateTime (an ISO string with an offset); what asDate refuses is BAD_USER_INPUT, naming `path`. */
export function asIso(value: DateTimeInput | null | undefined, path = "runAt"): string | null | undefined {
  const date = asDate(value, path);
  if (date == null) return date;
  // A string keeps the offset it was given; the gateway checks its fields.
  return typeof value === "string" ? value : date.toISOString();
}

function badDateTime(path: string, message: string): BadUserInputError {
  return new BadUserInputError(`Invalid ${path}: ${message}`, [{ path, message }]);
}
