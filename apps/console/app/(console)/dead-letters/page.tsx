import type { Metadata } from "next";
import { DeadLetterBulkAll } from "@/components/dead-letters/DeadLetterBulkAll";
import { DeadLetterTable } from "@/components/dead-letters/DeadLetterTable";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { Pagination, parseCursorStack } from "@/components/tasks/Pagination";
import { PastTheEnd } from "@/components/tasks/PastTheEnd";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { SelectFilter } from "@/components/ui/SelectFilter";
import { listQueueNames } from "@/lib/api/queues";
import { listDeadLetters } from "@/lib/api/tasks";
import { param, query, type SearchParams } from "@/lib/search-params";

export const metadata: Metadata = { title: "Dead letters" };

const PAGE_SIZE = 100;

export default async function DeadLettersPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  const queue = param(sp, "queue");
  const after = param(sp, "after");
  const prev = parseCursorStack(param(sp, "prev"));
  const [page, queues] = await Promise.all([listDeadLetters(queue, PAGE_SIZE, after), listQueueNames()]);
  return (
    <>
      <PageHeader
        title="Dead letters"
        description="Tasks that ran out of attempts or failed permanently. Fix the cause, then redrive them, or discard what is no longer wanted."
        actions={<LiveRefresh {...(queue ? { queue } : {})} />}
      />
      <SelectFilter
        formLabel="Filter dead letters"
        id="dl-queue"
        label="Queue"
        name="queue"
        value={queue}
        anyLabel="Every queue"
        options={queues.ok ? queues.data : []}
      />
      {/* Outside the list and whatever the page's read answered, so its progress (or the error that
          stopped it) stays when the list empties or cannot be read; a new filter starts it afresh. */}
      <DeadLetterBulkAll key={queue ?? ""} queue={queue ?? null} total={page.ok ? page.data.totalCount : null} />
      {!page.ok ? (
        <ErrorState error={page.error} what="Dead letters" />
      ) : page.data.nodes.length === 0 && after && page.data.totalCount > 0 ? (
        // Page 2's last dead letters were redriven or discarded here, or the link is an old one.
        <PastTheEnd noun={{ one: "dead letter", many: "dead letters" }} total={page.data.totalCount} firstPage={`/dead-letters${query({ queue })}`} />
      ) : page.data.nodes.length === 0 ? (
        <EmptyState title="No dead letters" icon="✓">
          {queue ? `Nothing has died in ${queue}.` : "Nothing has died. Tasks that exhaust their retries or fail permanently land here."}
        </EmptyState>
      ) : (
        <>
          {/* One "now" for the server render and the hydration of the relative times. */}
          <DeadLetterTable tasks={page.data.nodes} now={Date.now()} />
          <Pagination
            basePath="/dead-letters"
            keep={{ queue }}
            after={after}
            prev={prev}
            endCursor={page.data.pageInfo.endCursor}
            hasNextPage={page.data.pageInfo.hasNextPage}
            totalCount={page.data.totalCount}
            shown={page.data.nodes.length}
          />
        </>
      )}
    </>
  );
}
