import type { Metadata } from "next";
import Link from "next/link";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { StatusBadge } from "@/components/ui/StatusBadge";
import { Time } from "@/components/ui/Time";
import { listWorkflows } from "@/lib/api/workflows";
import { param, type SearchParams } from "@/lib/search-params";

export const metadata: Metadata = { title: "Workflows" };

const PAGE_SIZE = 50;

export default async function WorkflowsPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const after = param(await searchParams, "after");
  const result = await listWorkflows(PAGE_SIZE, after);
  const last = result.ok ? result.data[result.data.length - 1] : undefined;
  return (
    <>
      <PageHeader title="Workflows" description="Graphs of tasks that run as their dependencies succeed." actions={<LiveRefresh />} />
      {!result.ok ? (
        <ErrorState error={result.error} what="Workflows" />
      ) : result.data.length === 0 ? (
        <EmptyState title={after ? "No more workflows" : "No workflows yet"} icon="⋔" action={after ? <Link className="button" href="/workflows">Back to the newest</Link> : undefined}>
          {after ? null : "Submit one with submitWorkflow: a set of tasks with dependsOn edges. Each one's progress shows here as a graph."}
        </EmptyState>
      ) : (
        <>
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Workflows, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Status</th>
                  <th scope="col" className="num">
                    Tasks
                  </th>
                  <th scope="col">Created</th>
                  <th scope="col">Completed</th>
                </tr>
              </thead>
              <tbody>
                {result.data.map((wf) => (
                  <tr key={wf.id}>
                    <td>
                      <Link href={`/workflows/${wf.id}`}>{wf.name}</Link>
                      <div className="muted small mono">{wf.id}</div>
                    </td>
                    <td>
                      <StatusBadge status={wf.status === "FAILED" ? "DEAD" : wf.status} label={wf.status} />
                    </td>
                    <td className="num">{wf.tasks.length}</td>
                    <td className="nowrap">
                      <Time iso={wf.createdAt} relative />
                    </td>
                    <td className="nowrap">
                      <Time iso={wf.completedAt} relative />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {result.data.length === PAGE_SIZE && last ? (
            <nav className="pagination" aria-label="Pages">
              <span />
              <Link className="button button-small" href={`/workflows?after=${encodeURIComponent(last.id)}`} rel="next">
                Older →
              </Link>
            </nav>
          ) : null}
        </>
      )}
    </>
  );
}
