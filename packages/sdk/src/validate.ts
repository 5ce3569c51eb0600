/**
 * Local input checks with the same zod schemas the gateway uses (from
 * @tasklane/core), so a bad input fails before a round trip with the same
 * BAD_USER_INPUT and fieldErrors. The gateway stays the authority: it may
 * refuse what passes here (e.g. a DateTime without an offset).
 */
import { BadUserInputError } from "@tasklane/core/errors";
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

/** What the zod schemas expect for a DateTime (a Date). */
export function asDate(value: DateTimeInput | null | undefined): Date | null | undefined {
  return value == null || value instanceof Date ? value : new Date(value);
}

/** What the API expects for a DateTime (an ISO string with an offset). */
export function asIso(value: DateTimeInput | null | undefined): string | null | undefined {
  return value instanceof Date ? value.toISOString() : value;
}
