import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { StatusBadge } from "@/components/ui/StatusBadge";
import { Time } from "@/components/ui/Time";
import { WorkflowGraph } from "@/components/workflows/WorkflowGraph";
import { WorkflowTaskTable } from "@/components/workflows/WorkflowTaskTable";
import { getWorkflow } from "@/lib/api/workflows";
import { decodeSegment } from "@/lib/route-param";
import { TASK_STATUSES } from "@/lib/statuses";

export const metadata: Metadata = { title: "Workflow" };

/**
 * No loading.tsx above this page (components/ui/PageLoading.tsx): nothing is
 * sent before the record is read, so an unknown one is a real 404.
 */
export default async function WorkflowPage({ params }: { params: Promise<{ id: string }> }) {
  const id = decodeSegment((await params).id);
  if (id === null) notFound();
  const result = await getWorkflow(id);
  const breadcrumb = <Link href="/workflows">← Workflows</Link>;
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Workflow" breadcrumb={breadcrumb} />
        <ErrorState error={result.error} what="Workflows" />
      </>
    );
  }
  const wf = result.data;
  if (wf === null) notFound();
  const counts = TASK_STATUSES.map((s) => ({ status: s, n: wf.tasks.filter((t) => t.task.status === s).length })).filter((c) => c.n > 0);
  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="row">
            {wf.name}
            <StatusBadge status={wf.status === "FAILED" ? "DEAD" : wf.status} label={wf.status} />
          </span>
        }
        description={
          <>
            <span className="mono">{wf.id}</span> · created <Time iso={wf.createdAt} /> · completed <Time iso={wf.completedAt} />
          </>
        }
        actions={<LiveRefresh workflowId={wf.id} />}
      />
      <div className="stack">
        <section aria-labelledby="graph">
          <h2 id="graph">Graph</h2>
          <WorkflowGraph nodes={wf.tasks} />
          <div className="legend" aria-label="Tasks by status">
            {counts.map((c) => (
              <StatusBadge key={c.status} status={c.status} label={`${c.status} ${c.n}`} />
            ))}
          </div>
        </section>
        <section aria-labelledby="tasks">
          <h2 id="tasks">Tasks</h2>
          <WorkflowTaskTable nodes={wf.tasks} />
        </section>
      </div>
    </>
  );
}
