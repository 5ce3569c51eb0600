import { formatDateTime, formatRelative } from "@/lib/format";

/**
 * An instant as "3 min ago" with the exact UTC time on hover and for assistive tech.
 * A relative time reads as of the page's render on the server. In a client
 * component pass that render's `now` from the server page: the browser's own
 * clock would hydrate to different text than the server sent (React #418).
 */
export function Time({ iso, relative = false, now }: { iso: string | null | undefined; relative?: boolean; now?: number }) {
  if (!iso) return <span className="muted">—</span>;
  const exact = formatDateTime(iso);
  return (
    <time dateTime={iso} title={exact}>
      {relative ? formatRelative(iso, now) : exact}
    </time>
  );
}
