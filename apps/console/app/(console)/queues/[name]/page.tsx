import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { QueueStatsList } from "@/components/overview/QueueStatsList";
import { PauseButton } from "@/components/queues/PauseButton";
import { QueueLifecycleButtons } from "@/components/queues/QueueLifecycleButtons";
import { QueueForm } from "@/components/queues/QueueForm";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { getQueue } from "@/lib/api/queues";
import { decodeSegment } from "@/lib/route-param";

export const metadata: Metadata = { title: "Queue" };

/**
 * No loading.tsx above this page (components/ui/PageLoading.tsx): nothing is
 * sent before the record is read, so an unknown one is a real 404.
 */
export default async function QueuePage({ params }: { params: Promise<{ name: string }> }) {
  const name = decodeSegment((await params).name);
  if (name === null) notFound();
  const result = await getQueue(name);
  const breadcrumb = <Link href="/queues">← Queues</Link>;
  if (!result.ok) {
    return (
      <>
        <PageHeader title={name} breadcrumb={breadcrumb} />
        <ErrorState error={result.error} what="Queue" />
      </>
    );
  }
  const queue = result.data;
  if (queue === null) notFound();
  return (
    <>
      <PageHeader
        title={queue.name}
        breadcrumb={breadcrumb}
        description={`${queue.mode} queue${queue.paused ? " · paused" : ""}`}
        actions={
          <>
            <Link className="button" href={`/tasks?queue=${encodeURIComponent(queue.name)}`}>
              Tasks
            </Link>
            <PauseButton name={queue.name} paused={queue.paused} />
            <QueueLifecycleButtons queue={queue} />
          </>
        }
      />
      <div className="stack">
        <section className="card" aria-label="Counts">
          <QueueStatsList stats={queue.stats} />
        </section>
        <QueueForm queue={queue} />
      </div>
    </>
  );
}
