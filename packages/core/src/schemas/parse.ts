/**
 * The single bridge from zod to the contract's BAD_USER_INPUT error.
 */
import type { z } from "zod";
import { BadUserInputError, type FieldError } from "../errors.js";

export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw badInput(result.error.issues, []);
}

/**
 * One argument on its own (`id`, `queue`): its refusal names it, as parseInput
 * names the fields of an object (a bare value's issues have an empty path).
 */
export function parseArg<T>(schema: z.ZodType<T>, name: string, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw badInput(result.error.issues, [name]);
}

function badInput(issues: readonly z.core.$ZodIssue[], prefix: readonly string[]): BadUserInputError {
  const fieldErrors: FieldError[] = issues.map((issue) => ({
    path: [...prefix, ...issue.path.map(String)].join("."),
    message: issue.message,
  }));
  const first = fieldErrors[0];
  const where = first === undefined || first.path === "" ? "input" : first.path;
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : "";
  return new BadUserInputError(`Invalid ${where}: ${first?.message ?? "invalid value"}${more}`, fieldErrors);
}
