import { toneOf } from "@/lib/statuses";

/** A status as text in a coloured pill: the colour only repeats what the word says. */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    <span className={`badge tone-${toneOf(status)}`} data-status={status}>
      {label ?? status}
    </span>
  );
}
