/**
 * Dates, durations and numbers as the console prints them. Times are shown in
 * UTC (server and browser render the same text, and operators compare them
 * with logs); schedule previews use the schedule's own zone.
 */
const DATE_TIME = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hour12: false,
  timeZone: "UTC",
});

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "—" : `${DATE_TIME.format(date)} UTC`;
}

/** "Sun 29 Nov 2026, 09:00:00 CET" in the given IANA zone. */
export function formatInZone(iso: string, timeZone: string): string {
  try {
    return new Intl.DateTimeFormat("en-GB", {
      weekday: "short",
      year: "numeric",
      month: "short",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hour12: false,
      timeZone,
      timeZoneName: "short",
    }).format(new Date(iso));
  } catch {
    return formatDateTime(iso);
  }
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds == null || !Number.isFinite(seconds)) return "—";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

export function durationBetween(from: string | null, to: string | null): string {
  if (!from || !to) return "—";
  return formatDuration((Date.parse(to) - Date.parse(from)) / 1000);
}

/** "3 min ago" / "in 2 h", relative to `now` (the render time). */
export function formatRelative(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "—";
  const seconds = (Date.parse(iso) - now) / 1000;
  if (!Number.isFinite(seconds)) return "—";
  const text = formatDuration(Math.abs(seconds)).replace(/ \d+ (s|min|h)$/, "");
  if (Math.abs(seconds) < 1) return "just now";
  return seconds < 0 ? `${text} ago` : `in ${text}`;
}

const INTEGER = new Intl.NumberFormat("en-GB");
export const formatCount = (n: number): string => INTEGER.format(n);

export function formatPercent(ratio: number): string {
  return `${(ratio * 100).toFixed(ratio > 0 && ratio < 0.1 ? 1 : 0)}%`;
}

export function shortId(id: string): string {
  const underscore = id.indexOf("_");
  return underscore > 0 && id.length > underscore + 13 ? `${id.slice(0, underscore + 1)}…${id.slice(-10)}` : id;
}

/** Pretty JSON for payloads and results; `undefined`/null say so. */
export function prettyJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(value, null, 2);
}

/** A label as it reads inside a sentence: "Dead letters" → "dead letters"; an acronym stays ("API keys"). */
export function inSentence(label: string): string {
  return label.replace(/^[A-Z](?=[a-z])/, (first) => first.toLowerCase());
}
