import Link from "next/link";
import type { ApiResult } from "@/lib/graphql-error";
import type { WebhookDelivery } from "@/lib/api/types";
import { query } from "@/lib/search-params";
import type { DeliveryStatus } from "@/lib/statuses";
import { Pagination } from "../tasks/Pagination";
import { EmptyState } from "../ui/EmptyState";
import { ErrorState } from "../ui/ErrorState";
import { DeliveryLog } from "./DeliveryLog";

/**
 * One page of the delivery log, newest first, and the links to the pages
 * either side. `result` holds one delivery more than a page when there are
 * older ones (the API counts nothing); `after` is the last delivery of the
 * page before, the API's `before` cursor.
 */
export function DeliveryPages({
  result,
  pageSize,
  status,
  after,
  prev,
}: {
  result: ApiResult<WebhookDelivery[]>;
  pageSize: number;
  status: DeliveryStatus | undefined;
  after: string | undefined;
  prev: string[];
}) {
  const newest = `/webhooks${query({ status })}#log`;
  const back = (
    <Link className="button" href={newest}>
      Back to the newest
    </Link>
  );
  if (!result.ok) {
    // The cursor's delivery is gone: pruned by retention since the page before was read, or an old link.
    if (after && result.error.code === "NOT_FOUND") {
      return (
        <EmptyState title="This page of the log is gone" icon="⇤" action={back}>
          The delivery it started after is no longer in the log (finished deliveries are deleted after the retention period), or the link is an old one.
        </EmptyState>
      );
    }
    return <ErrorState error={result.error} what="Deliveries" />;
  }
  const deliveries = result.data.slice(0, pageSize);
  if (deliveries.length === 0 && after) return <EmptyState title="No older deliveries" icon="⇤" action={back} />;
  if (deliveries.length === 0 && status) {
    return (
      <EmptyState title={`No ${status} deliveries`} icon="⌕">
        No delivery in the log is {status} now; choose Any status to see them all.
      </EmptyState>
    );
  }
  return (
    <>
      <DeliveryLog deliveries={deliveries} />
      {deliveries.length > 0 ? (
        <Pagination
          basePath="/webhooks"
          keep={{ status }}
          after={after}
          prev={prev}
          endCursor={deliveries[deliveries.length - 1]?.id ?? null}
          hasNextPage={result.data.length > pageSize}
          shown={deliveries.length}
          labels={{ previous: "← Newer", next: "Older →" }}
          fragment="log"
        />
      ) : null}
    </>
  );
}
