import pg from "pg";

/**
 * Text that came from outside (an endpoint's response body, an error message
 * quoting it) made safe for PostgreSQL: `text` columns reject the NUL
 * character and `jsonb` rejects the `\u0000` escape, so one NUL byte in a
 * tenant's answer would make the outcome unrecordable (the attempt then
 * ran until its lease expired and ran again). NUL becomes U+FFFD.
 */
const REPLACEMENT = "\uFFFD";

export function storableText(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", REPLACEMENT) : text;
}

/** JSON text for a jsonb parameter: `\u0000` escapes (not escaped backslashes before "u0000") become U+FFFD. */
export function storableJson(json: string): string {
  return json.includes("\\u0000") ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, `$1${REPLACEMENT}`) : json;
}

/**
 * JSON.stringify writes paired surrogates as they are and escapes an unpaired
 * one (`\ud800`), which jsonb refuses ("Unicode low surrogate must follow a
 * high surrogate"). Only an escape after an even run of backslashes counts:
 * `\\ud800` is an escaped backslash, then the letters "ud800".
 */
const UNPAIRED_SURROGATE_ESCAPE = /(?<!\\)(?:\\\\)*\\ud[89a-f]/;

/**
 * Whether JSON text written by JSON.stringify holds a string or key with an
 * unpaired surrogate, which jsonb cannot store (NUL, the other one, storableJson
 * replaces). Text from elsewhere may escape paired surrogates too: stringify it first.
 */
export function hasUnpairedSurrogate(stringified: string): boolean {
  return UNPAIRED_SURROGATE_ESCAPE.test(stringified);
}

/**
 * Whether PostgreSQL refused a statement for a value it was given rather than
 * for its own state: SQLSTATE class 22 (data exception, e.g. invalid JSON
 * text for jsonb) or 54 (program limit exceeded, e.g. a jsonb too large).
 * Sent again, the same value fails again; anything else (a lost connection,
 * a deadlock) may pass.
 */
export function refusedForValue(error: unknown): boolean {
  return error instanceof pg.DatabaseError && typeof error.code === "string" && (error.code.startsWith("22") || error.code.startsWith("54"));
}
