import type { Metadata } from "next";
import { UsageMeter } from "@/components/usage/UsageMeter";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { getTenant } from "@/lib/api/tenant";
import { formatCount } from "@/lib/format";

export const metadata: Metadata = { title: "Usage & limits" };

export default async function UsagePage() {
  const result = await getTenant();
  const header = <PageHeader title="Usage & limits" description="Your tenant's limits, set by the platform operator, and what you have used today (UTC)." />;
  if (!result.ok) {
    return (
      <>
        {header}
        <ErrorState error={result.error} what="Usage" />
      </>
    );
  }
  const { limits, usage, name, id } = result.data;
  return (
    <>
      {header}
      <div className="stack">
        <div className="grid-2">
          <UsageMeter label="Submitted today" used={usage.submittedToday} limit={limits.dailyTaskQuota} hint="Task submissions since 00:00 UTC; the daily quota resets then." />
          <UsageMeter label="Pending tasks" used={usage.pendingTasks} limit={limits.maxPendingTasks} hint="Scheduled, queued, retrying and blocked tasks." />
          <UsageMeter label="Running tasks" used={usage.runningTasks} limit={limits.maxConcurrency} hint="Tasks running at once, across all queues." />
        </div>
        <section className="card" aria-labelledby="limits">
          <h2 id="limits">Limits</h2>
          <dl className="meta">
            <div>
              <dt>Tenant</dt>
              <dd>
                {name} <span className="muted small mono">{id}</span>
              </dd>
            </div>
            <div>
              <dt>Fair-share weight</dt>
              <dd>{limits.weight} (your share of the worker fleet relative to other tenants)</dd>
            </div>
            <div>
              <dt>API rate</dt>
              <dd>
                {formatCount(limits.apiRatePerSecond)} requests/s, bursts of {formatCount(limits.apiBurst)}
              </dd>
            </div>
            <div>
              <dt>Daily task quota</dt>
              <dd>{limits.dailyTaskQuota === null ? "No limit" : formatCount(limits.dailyTaskQuota)}</dd>
            </div>
            <div>
              <dt>Max pending tasks</dt>
              <dd>{limits.maxPendingTasks === null ? "No limit" : formatCount(limits.maxPendingTasks)}</dd>
            </div>
            <div>
              <dt>Max concurrency</dt>
              <dd>{limits.maxConcurrency === null ? "No limit" : formatCount(limits.maxConcurrency)}</dd>
            </div>
          </dl>
        </section>
      </div>
    </>
  );
}
