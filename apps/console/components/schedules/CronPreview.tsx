"use client";

import { useEffect, useState } from "react";
import { previewCronAction } from "@/app/(console)/schedules/actions";
import { formatInZone } from "@/lib/format";
import type { CronPreview as Preview } from "@/lib/cron-preview";

/** The next five run times, recomputed on the server shortly after the user stops typing. */
export function CronPreview({ cron, timezone, initial }: { cron: string; timezone: string; initial: Preview | null }) {
  const [preview, setPreview] = useState<Preview | null>(initial);
  const [pending, setPending] = useState(false);

  useEffect(() => {
    let cancelled = false;
    setPending(true);
    const timer = setTimeout(() => {
      void previewCronAction(cron, timezone)
        .then((next) => {
          if (!cancelled) setPreview(next);
        })
        .catch(() => {
          if (!cancelled) setPreview({ ok: false, error: "The preview could not be computed right now.", field: null });
        })
        .finally(() => {
          if (!cancelled) setPending(false);
        });
    }, 300);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [cron, timezone]);

  const zone = timezone.trim() || "UTC";
  return (
    <section className="notice notice-info" aria-labelledby="cron-preview-title" aria-live="polite" aria-busy={pending} data-testid="cron-preview">
      <strong id="cron-preview-title">Next 5 runs in {zone}</strong>
      {preview === null ? (
        <p className="small">Enter an expression to see when it runs.</p>
      ) : preview.ok ? (
        <ol style={{ margin: "0.35rem 0 0", paddingLeft: "1.25rem" }}>
          {preview.times.map((iso) => (
            <li key={iso}>
              <time dateTime={iso}>{formatInZone(iso, zone)}</time> <span className="muted small">({iso.replace(".000Z", "Z")})</span>
            </li>
          ))}
        </ol>
      ) : (
        <p className="small" role="alert" style={{ margin: "0.35rem 0 0" }}>
          {preview.error}
        </p>
      )}
    </section>
  );
}
