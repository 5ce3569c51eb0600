/**
 * The single bridge from zod to the contract's BAD_USER_INPUT error.
 */
import type { z } from "zod";
import { BadUserInputError, type FieldError } from "../errors.js";

export function parseInput<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const fieldErrors: FieldError[] = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = fieldErrors[0];
  const where = first === undefined || first.path === "" ? "input" : first.path;
  const more = fieldErrors.length > 1 ? ` (and ${fieldErrors.length - 1} more)` : "";
  throw new BadUserInputError(`Invalid ${where}: ${first?.message ?? "invalid value"}${more}`, fieldErrors);
}
