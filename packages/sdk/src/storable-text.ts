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

/** Whether `text` holds a NUL or an unpaired surrogate (what the gateway refuses). */
export function isUnstorable(text: string): boolean {
  return !text.isWellFormed() || text.includes("\u0000");
}

/** `text` with each NUL and each unpaired surrogate replaced by U+FFFD (same length). */
export function storableText(text: string): string {
  return text.toWellFormed().replaceAll("\u0000", "\uFFFD");
}

/** At most `max` UTF-16 code units of `text`, one fewer when the cut would split a surrogate pair. */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}
