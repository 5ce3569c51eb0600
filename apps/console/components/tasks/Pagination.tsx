import Link from "next/link";
import { formatCount } from "@/lib/format";

/** The first page's place in the "prev" stack (it has no cursor). */
const FIRST = "-";

export function parseCursorStack(raw: string | undefined): string[] {
  return raw === undefined ? [] : raw.split(",").filter((c) => c !== "").slice(-200);
}

/**
 * Keyset pagination: "after" is the API's cursor; "prev" carries the cursors
 * of the pages before this one so Previous needs no offset query. Lists the
 * API does not count (workflows) leave totalCount out.
 */
export function Pagination({
  basePath,
  keep,
  after,
  prev,
  endCursor,
  hasNextPage,
  totalCount,
  shown,
  labels = { previous: "← Previous", next: "Next →" },
  fragment,
}: {
  basePath: string;
  keep: Record<string, string | undefined>;
  after: string | undefined;
  prev: string[];
  endCursor: string | null;
  hasNextPage: boolean;
  totalCount?: number;
  shown: number;
  labels?: { previous: string; next: string };
  /** The id of the list's section, when the page holds more than the list: a new page opens at the list, not the page's top. */
  fragment?: string;
}) {
  const href = (cursor: string | undefined, stack: string[]) => {
    const search = new URLSearchParams();
    for (const [k, v] of Object.entries(keep)) if (v) search.set(k, v);
    if (cursor) search.set("after", cursor);
    if (stack.length > 0) search.set("prev", stack.join(","));
    const text = search.toString();
    return `${basePath}${text ? `?${text}` : ""}${fragment ? `#${fragment}` : ""}`;
  };
  const page = prev.length + 1;
  const last = prev[prev.length - 1];
  const previous = last !== undefined ? href(last === FIRST ? undefined : last, prev.slice(0, -1)) : null;
  const next = hasNextPage && endCursor ? href(endCursor, [...prev, after ?? FIRST]) : null;
  return (
    <nav className="pagination" aria-label="Pages">
      <span className="muted small" aria-live="polite">
        Page {page} · {formatCount(shown)} shown{totalCount === undefined ? "" : ` of ${formatCount(totalCount)}`}
      </span>
      <span className="row">
        {previous ? (
          <Link className="button button-small" href={previous} rel="prev">
            {labels.previous}
          </Link>
        ) : (
          <span className="button button-small" aria-disabled="true">
            {labels.previous}
          </span>
        )}
        {next ? (
          <Link className="button button-small" href={next} rel="next">
            {labels.next}
          </Link>
        ) : (
          <span className="button button-small" aria-disabled="true">
            {labels.next}
          </span>
        )}
      </span>
    </nav>
  );
}
