/**
 * How a push endpoint's HTTP answer maps onto retry semantics.
 */

export type HttpOutcome = "success" | "retryable" | "permanent";

/** Largest Retry-After honoured, in seconds (one day). */
const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * 408/429/5xx are transient by definition. Redirects are not followed (the
 * target could be an internal address that bypassed the SSRF check), so a 3xx
 * is a misconfiguration: permanent. Anything outside 100..599 is garbage: permanent.
 */
export function classifyHttpStatus(status: number): HttpOutcome {
  if (!Number.isInteger(status)) return "permanent";
  if (status >= 200 && status <= 299) return "success";
  if (status === 408 || status === 429) return "retryable";
  if (status >= 500 && status <= 599) return "retryable";
  return "permanent";
}

// RFC 9110 HTTP-date: IMF-fixdate, obsolete RFC 850 and asctime forms. Checked
// before Date.parse, which would otherwise accept almost anything ("1", "2024").
const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850_DATE = /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME_DATE = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * Retry-After in seconds from now, or undefined when absent or unusable.
 * An HTTP-date in the past yields 0 ("may retry now"). Capped at one day.
 */
export function parseRetryAfter(header: string | null | undefined, nowMs: number): number | undefined {
  if (header == null) return undefined;
  const v = header.trim();
  if (/^\d+$/.test(v)) return Math.min(Number(v), MAX_RETRY_AFTER_SECONDS);
  if (!IMF_FIXDATE.test(v) && !RFC850_DATE.test(v) && !ASCTIME_DATE.test(v)) return undefined;
  // asctime carries no zone; HTTP dates are always GMT.
  const at = Date.parse(ASCTIME_DATE.test(v) ? `${v} GMT` : v);
  if (Number.isNaN(at)) return undefined;
  const seconds = Math.ceil((at - nowMs) / 1000);
  return Math.min(Math.max(seconds, 0), MAX_RETRY_AFTER_SECONDS);
}
