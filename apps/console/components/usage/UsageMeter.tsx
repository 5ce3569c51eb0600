import { formatCount } from "@/lib/format";

/** A used-of-limit bar; with no limit it just says so. */
export function UsageMeter({ label, used, limit, hint }: { label: string; used: number; limit: number | null; hint: string }) {
  const ratio = limit && limit > 0 ? Math.min(1, used / limit) : null;
  const id = label.toLowerCase().replace(/[^a-z0-9]+/g, "-");
  return (
    <div className="meter card">
      <div className="row" style={{ justifyContent: "space-between" }}>
        <span className="label" id={`${id}-label`}>
          {label}
        </span>
        <span>
          <strong>{formatCount(used)}</strong> {limit === null ? <span className="muted">(no limit)</span> : <span className="muted">of {formatCount(limit)}</span>}
        </span>
      </div>
      {ratio !== null ? (
        <div
          className="meter-track"
          role="meter"
          aria-labelledby={`${id}-label`}
          aria-valuemin={0}
          aria-valuemax={limit ?? 0}
          aria-valuenow={used}
          aria-valuetext={`${formatCount(used)} of ${formatCount(limit ?? 0)}`}
        >
          <div className={`meter-fill${ratio >= 0.9 ? " high" : ""}`} style={{ width: `${(ratio * 100).toFixed(1)}%` }} />
        </div>
      ) : null}
      <span className="muted small">{hint}</span>
    </div>
  );
}
