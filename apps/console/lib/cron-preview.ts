/**
 * The schedule form's preview: the next run times of a cron expression in a
 * time zone, computed here with the same code the scheduler fires by
 * (@tasklane/core), so the preview cannot disagree with the real runs.
 */
import "server-only";
import { isUserError, nextOccurrences, validateCron } from "@tasklane/core";

export type CronPreview = { ok: true; times: string[] } | { ok: false; error: string; field: "cron" | "timezone" | null };

export function previewCron(cron: string, timezone: string, count = 5, after = new Date()): CronPreview {
  const expression = cron.trim();
  const zone = timezone.trim() || "UTC";
  if (expression === "") return { ok: false, error: "Enter a cron expression.", field: "cron" };
  try {
    validateCron(expression, zone);
    const times = nextOccurrences(expression, zone, after, count).map((d) => d.toISOString());
    if (times.length === 0) return { ok: false, error: "This expression never fires again.", field: "cron" };
    return { ok: true, times };
  } catch (error: unknown) {
    if (isUserError(error)) {
      const fieldErrors = (error.extensions.fieldErrors as { path: string; message: string }[] | undefined) ?? [];
      const first = fieldErrors[0];
      const field = first?.path === "timezone" ? "timezone" : first?.path === "cron" ? "cron" : null;
      return { ok: false, error: first ? `${first.path === "timezone" ? "Time zone" : "Cron"}: ${first.message}` : error.message, field };
    }
    return { ok: false, error: "This expression cannot be previewed.", field: "cron" };
  }
}

/** IANA zones for the form's suggestions (UTC first). */
export function timeZones(): string[] {
  const zones = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return ["UTC", ...zones.filter((z) => z !== "UTC")];
}
