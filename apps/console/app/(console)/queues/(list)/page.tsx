import type { Metadata } from "next";
import Link from "next/link";
import { QueueTable } from "@/components/queues/QueueTable";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { listQueues } from "@/lib/api/queues";
import { param, type SearchParams } from "@/lib/search-params";

export const metadata: Metadata = { title: "Queues" };

export default async function QueuesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const created = param(params, "created");
  const deleted = param(params, "deleted");
  const result = await listQueues();
  const create = (
    <Link className="button button-primary" href="/queues/new">
      New queue
    </Link>
  );
  return (
    <>
      <PageHeader title="Queues" description="Where tasks wait: PUSH queues call your endpoint, PULL queues wait for your workers." actions={create} />
      {created ? (
        <div className="notice notice-success" role="status" style={{ marginBottom: "1rem" }}>
          Queue <strong>{created}</strong> created.
        </div>
      ) : null}
      {deleted ? (
        <div className="notice notice-success" role="status" style={{ marginBottom: "1rem" }}>
          Queue <strong>{deleted}</strong> deleted.
        </div>
      ) : null}
      {!result.ok ? (
        <ErrorState error={result.error} what="Queues" />
      ) : result.data.length === 0 ? (
        <EmptyState title="No queues yet" icon="≡" action={create}>
          Create a queue to start submitting tasks to it.
        </EmptyState>
      ) : (
        <QueueTable queues={result.data} />
      )}
    </>
  );
}
