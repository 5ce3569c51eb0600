import type { QueueStats } from "@/lib/api/types";
import { formatCount, formatDuration } from "@/lib/format";

/** A queue's live counts as a definition list (term under value, read in order by screen readers). */
export function QueueStatsList({ stats }: { stats: QueueStats }) {
  const items: { label: string; value: string; danger?: boolean }[] = [
    { label: "Queued", value: formatCount(stats.queued) },
    { label: "Running", value: formatCount(stats.running) },
    { label: "Scheduled", value: formatCount(stats.scheduled) },
    { label: "Retrying", value: formatCount(stats.retrying) },
    { label: "Dead", value: formatCount(stats.dead), danger: stats.dead > 0 },
    { label: "Oldest queued", value: stats.oldestQueuedAgeSeconds === null ? "—" : formatDuration(stats.oldestQueuedAgeSeconds) },
  ];
  return (
    <dl className="stat-grid">
      {items.map((item) => (
        <div key={item.label} className={`stat${item.danger ? " stat-danger" : ""}`}>
          <dt>{item.label}</dt>
          <dd>{item.value}</dd>
        </div>
      ))}
    </dl>
  );
}
