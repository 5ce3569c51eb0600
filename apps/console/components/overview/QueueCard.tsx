import Link from "next/link";
import type { ActivityBucket, Queue } from "@/lib/api/types";
import { StatusBadge } from "../ui/StatusBadge";
import { ActivityCharts } from "./ActivityCharts";
import { QueueStatsList } from "./QueueStatsList";

export function QueueCard({ queue, buckets, bucketMinutes }: { queue: Queue; buckets: ActivityBucket[]; bucketMinutes: number }) {
  const headingId = `queue-${queue.name}`;
  return (
    <section className="card" aria-labelledby={headingId} data-queue={queue.name}>
      <div className="card-header">
        <div className="row">
          <h2 id={headingId}>
            <Link href={`/tasks?queue=${encodeURIComponent(queue.name)}`}>{queue.name}</Link>
          </h2>
          <StatusBadge status="MODE" label={queue.mode} />
          {queue.paused ? <StatusBadge status="PENDING" label="Paused" /> : null}
        </div>
        <Link className="button button-small" href={`/queues/${encodeURIComponent(queue.name)}`}>
          Settings
        </Link>
      </div>
      <QueueStatsList stats={queue.stats} />
      <ActivityCharts queue={queue.name} buckets={buckets} bucketMinutes={bucketMinutes} />
    </section>
  );
}
