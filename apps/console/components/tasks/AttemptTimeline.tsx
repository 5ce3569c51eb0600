import type { Attempt } from "@/lib/api/types";
import { durationBetween, formatDuration } from "@/lib/format";
import { toneOf } from "@/lib/statuses";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

/**
 * How long an attempt took, or for one still running how long it has run as of this render (a
 * server component: the page's live refresh renders it again), so long work shows it progressing.
 */
function duration(attempt: Attempt, now: number): string {
  if (attempt.finishedAt || attempt.outcome) return durationBetween(attempt.startedAt, attempt.finishedAt);
  const started = Date.parse(attempt.startedAt);
  return Number.isFinite(started) ? `${formatDuration(Math.max(0, now - started) / 1000)} so far` : "—";
}

/** Every attempt in order (numbers restart at 1 after a redrive, so the list order is the truth). */
export function AttemptTimeline({ attempts }: { attempts: Attempt[] }) {
  if (attempts.length === 0) return <p className="muted">No attempt has started yet.</p>;
  const now = Date.now();
  return (
    <ol className="timeline" aria-label="Attempts, oldest first">
      {attempts.map((a, i) => {
        const outcome = a.outcome ?? (a.finishedAt ? "FINISHED" : "RUNNING");
        return (
          <li key={`${i}-${a.number}`} className={`tone-${toneOf(outcome)}`} data-outcome={outcome}>
            <div className="row">
              <strong>Attempt {a.number}</strong>
              <StatusBadge status={outcome} />
            </div>
            <dl>
              <div>
                <dt>Worker</dt>
                <dd className="mono">{a.workerId ?? "—"}</dd>
              </div>
              <div>
                <dt>Lease token</dt>
                <dd className="mono">{a.leaseToken ?? "—"}</dd>
              </div>
              <div>
                <dt>Started</dt>
                <dd>
                  <Time iso={a.startedAt} />
                </dd>
              </div>
              <div>
                <dt>Ended</dt>
                <dd>
                  <Time iso={a.finishedAt} />
                </dd>
              </div>
              <div>
                <dt>Duration</dt>
                <dd>{duration(a, now)}</dd>
              </div>
            </dl>
            {a.error ? (
              <pre className="error-text" style={{ marginTop: "0.5rem" }}>
                {a.error}
              </pre>
            ) : null}
          </li>
        );
      })}
    </ol>
  );
}
