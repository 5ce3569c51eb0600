import type { Metadata } from "next";
import Link from "next/link";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { QueueCard } from "@/components/overview/QueueCard";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { overview } from "@/lib/api/queues";
import { formatCount } from "@/lib/format";

export const metadata: Metadata = { title: "Overview" };

/** Must match the bucketMinutes overview() asks for. */
const BUCKET_MINUTES = 2;

export default async function OverviewPage() {
  const result = await overview();
  const header = <PageHeader title="Overview" description="Every queue's backlog now, and its last hour." actions={<LiveRefresh />} />;
  if (!result.ok) {
    return (
      <>
        {header}
        <ErrorState error={result.error} what="Queues" />
      </>
    );
  }
  const { queues, queueActivity } = result.data;
  const totals = queues.reduce(
    (t, q) => ({ queued: t.queued + q.stats.queued, running: t.running + q.stats.running, retrying: t.retrying + q.stats.retrying, dead: t.dead + q.stats.dead }),
    { queued: 0, running: 0, retrying: 0, dead: 0 },
  );
  const activity = new Map(queueActivity.map((a) => [a.queue, a.buckets]));
  return (
    <>
      {header}
      {queues.length === 0 ? (
        <EmptyState title="No queues yet" action={<Link className="button button-primary" href="/queues/new">Create a queue</Link>}>
          Tasks run in queues. Create one to start submitting work.
        </EmptyState>
      ) : (
        <div className="stack">
          <section className="card" aria-label="All queues">
            <dl className="stat-grid">
              <div className="stat">
                <dt>Queues</dt>
                <dd>{formatCount(queues.length)}</dd>
              </div>
              <div className="stat">
                <dt>Queued</dt>
                <dd>{formatCount(totals.queued)}</dd>
              </div>
              <div className="stat">
                <dt>Running</dt>
                <dd>{formatCount(totals.running)}</dd>
              </div>
              <div className="stat">
                <dt>Retrying</dt>
                <dd>{formatCount(totals.retrying)}</dd>
              </div>
              <div className={`stat${totals.dead > 0 ? " stat-danger" : ""}`}>
                <dt>
                  <Link href="/dead-letters">Dead letters</Link>
                </dt>
                <dd>{formatCount(totals.dead)}</dd>
              </div>
            </dl>
          </section>
          {queues.map((queue) => (
            <QueueCard key={queue.name} queue={queue} buckets={activity.get(queue.name) ?? []} bucketMinutes={BUCKET_MINUTES} />
          ))}
        </div>
      )}
    </>
  );
}
