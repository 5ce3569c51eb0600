/**
 * Field schemas reused by the input schemas. Every optional field is
 * `.nullish()`: the contract reads omitted and null alike as "not given".
 * Plain `z.number()` is enough for "finite": zod 4 refuses NaN and ±Infinity.
 */
import { z } from "zod";
import { jsonLimitViolation } from "../json-limits.js";
import { MAX_JSON_DEPTH, MAX_URL_LENGTH, QUEUE_NAME_PATTERN, QUEUE_NAME_RULE } from "../limits.js";

/** A string with at least one non-whitespace character, at most `max` long (one issue for "", not two). */
export function nonBlankString(max: number) {
  return z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, { message: "must not be blank" });
}

/** Any JSON value within a byte budget and MAX_JSON_DEPTH. */
export function boundedJson(maxBytes: number) {
  return z.unknown().superRefine((value, ctx) => {
    const problem = jsonLimitViolation(value, { maxBytes, maxDepth: MAX_JSON_DEPTH });
    if (problem !== null) ctx.addIssue({ code: "custom", message: problem });
  });
}

function isHttpUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/**
 * What a URL parser drops without a word: spaces and control characters
 * (U+0000-U+0020) at either end, and tabs and line breaks anywhere. A URL
 * holding them would be stored and shown as typed but dialled as something
 * else, so it is refused rather than quietly cleaned.
 */
const SILENTLY_DROPPED = /^[\u0000-\u0020]|[\u0000-\u0020]$|[\t\n\r]/;

/**
 * Syntax only: whether the target may be reached (SSRF policy, DNS) is decided
 * by checkOutboundUrl and the resolver at the edge, which know the deployment's
 * allowPrivate setting. Shared by webhook URLs, PUSH endpoints and callbacks,
 * so all three refuse the same strings.
 */
export const httpUrlSchema = z
  .string()
  .max(MAX_URL_LENGTH)
  .refine((raw) => !SILENTLY_DROPPED.test(raw), { message: "must not start or end with a space or control character, nor hold a tab or line break" })
  .refine(isHttpUrl, { message: "must be an absolute http(s) URL" });

export const queueNameSchema = z
  .string()
  .regex(QUEUE_NAME_PATTERN, { message: `must be ${QUEUE_NAME_RULE}` });
