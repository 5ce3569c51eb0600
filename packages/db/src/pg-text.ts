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
