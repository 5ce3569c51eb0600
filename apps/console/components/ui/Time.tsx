import { formatDateTime, formatRelative } from "@/lib/format";

/** An instant as "3 min ago" with the exact UTC time on hover and for assistive tech. */
export function Time({ iso, relative = false }: { iso: string | null | undefined; relative?: boolean }) {
  if (!iso) return <span className="muted">—</span>;
  const exact = formatDateTime(iso);
  return (
    <time dateTime={iso} title={exact}>
      {relative ? formatRelative(iso) : exact}
    </time>
  );
}
