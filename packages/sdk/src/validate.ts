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
 * encoding turns NaN and Infinity into null before the request leaves.
 */
export function checkResult(operation: string, result: unknown, path = "result"): void {
  checkLocally(operation, () => assertJsonWithin(result, { maxBytes: MAX_RESULT_BYTES, maxDepth: MAX_JSON_DEPTH, path }));
}

/** What the zod schemas expect for a DateTime (a Date). */
export function asDate(value: DateTimeInput | null | undefined): Date | null | undefined {
  return value == null || value instanceof Date ? value : new Date(value);
}

/** What the API expects for a DateTime (an ISO string with an offset); an invalid Date is BAD_USER_INPUT, as any bad input. */
export function asIso(value: DateTimeInput | null | undefined, field = "DateTime"): string | null | undefined {
  if (!(value instanceof Date)) return value;
  if (Number.isNaN(value.getTime())) {
    throw new TasklaneError("BAD_USER_INPUT", `${field} is an invalid Date`, { extensions: { code: "BAD_USER_INPUT", fieldErrors: [{ path: [field], message: "is an invalid Date" }] } });
  }
  return value.toISOString();
}
