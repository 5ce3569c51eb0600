import Link from "next/link";
import { formatCount } from "@/lib/format";
import { EmptyState } from "../ui/EmptyState";

/**
 * A later page that came back empty while the list is not: its last rows were
 * redriven, discarded or cleaned up since the page before was read, or the
 * link is an old one. Says so, rather than the list's "nothing here yet".
 */
export function PastTheEnd({ noun, total, firstPage }: { noun: { one: string; many: string }; total: number; firstPage: string }) {
  return (
    <EmptyState
      title={`No more ${noun.many} on this page`}
      icon="⇤"
      action={
        <Link className="button" href={firstPage}>
          Back to the first page
        </Link>
      }
    >
      This page is past the end of the list: {formatCount(total)} {total === 1 ? noun.one : noun.many} in all, on the pages before it.
    </EmptyState>
  );
}
