/**
 * How values read in the human output. The --json output never goes through
 * these: it carries the API's own values.
 */

const integer = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });

/** 12,345 */
export function count(n: number): string {
  return integer.format(n);
}

/** "1 task", "2 tasks"; `many` where adding "s" is wrong ("batches"). */
export function plural(n: number, noun: string, many = `${noun}s`): string {
  return `${count(n)} ${n === 1 ? noun : many}`;
}

/** An API DateTime as "2026-12-06 09:55:01Z" (UTC, seconds), "-" for null. */
export function time(iso: string | null | undefined): string {
  if (iso == null) return "-";
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.\d+)?Z$/.exec(iso);
  return match === null ? iso : `${match[1]} ${match[2]}Z`;
}

/** A JSON value on one line, "-" for null or absent. */
export function json(value: unknown): string {
  return value == null ? "-" : JSON.stringify(value);
}

/**
 * Text from the API (an error a worker threw, a type, a queue name) safe to
 * print on a terminal: line breaks stay, tabs become a space, and every other
 * control character (ESC, BEL, CR, C1 …) is shown as \u001b and the like, so
 * the text cannot move the cursor, recolour, retitle or clear the terminal.
 */
export function printable(value: string): string {
  return value
    .replace(/\r\n/g, "\n")
    .replace(/\t/g, " ")
    .replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** "-" for null or empty text. */
export function text(value: string | null | undefined): string {
  return value == null || value === "" ? "-" : value;
}

/** A duration for progress lines: "2.4 s", "45 s", "3 min 20 s", "2 h 05 min". */
export function duration(ms: number): string {
  if (ms < 9_950) return `${(Math.max(0, ms) / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${String(seconds % 60).padStart(2, "0")} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, "0")} min`;
}
