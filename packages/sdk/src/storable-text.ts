/**
 * Text the gateway can store. PostgreSQL holds neither U+0000 nor an unpaired
 * UTF-16 surrogate, and the gateway refuses both anywhere in a request with
 * BAD_USER_INPUT (it names the field, and stores nothing). For a failed
 * attempt's error, a diagnostic, refusing would lose the whole outcome: the
 * task would sit RUNNING until its lease expired and then read "lease
 * expired". So the SDK replaces what cannot be stored with U+FFFD, as the
 * database layer does for the texts it records itself (packages/db pg-text),
 * and cuts on a code point boundary so its own cut never makes a half pair.
 */

/** A high surrogate not followed by a low one, or a low one not preceded by a high one; and NUL. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
/** Cheap first look: most texts have no NUL and no surrogate at all. */
const MAYBE_UNSTORABLE = /[\u0000\ud800-\udfff]/;

/** Whether `text` holds a NUL or an unpaired surrogate (what the gateway refuses). */
export function isUnstorable(text: string): boolean {
  if (!MAYBE_UNSTORABLE.test(text)) return false;
  UNSTORABLE.lastIndex = 0;
  return UNSTORABLE.test(text);
}

/** `text` with each NUL and each unpaired surrogate replaced by U+FFFD (same length). */
export function storableText(text: string): string {
  return MAYBE_UNSTORABLE.test(text) ? text.replace(UNSTORABLE, "\uFFFD") : text;
}

/** At most `max` UTF-16 code units of `text`, one fewer when the cut would split a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
