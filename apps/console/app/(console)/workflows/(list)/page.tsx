import type { Metadata } from "next";
import Link from "next/link";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { Pagination, parseCursorStack } from "@/components/tasks/Pagination";
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
  const sp = await searchParams;
  const after = param(sp, "after");
  const prev = parseCursorStack(param(sp, "prev"));
  // One more than a page: whether there is an older page, without a count the API does not offer.
  const result = await listWorkflows(PAGE_SIZE + 1, after);
  const workflows = result.ok ? result.data.slice(0, PAGE_SIZE) : [];
  const hasOlder = result.ok && result.data.length > PAGE_SIZE;
  return (
    <>
      <PageHeader title="Workflows" description="Graphs of tasks that run as their dependencies succeed." actions={<LiveRefresh />} />
      {!result.ok ? (
        <ErrorState error={result.error} what="Workflows" />
      ) : workflows.length === 0 ? (
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
                {workflows.map((wf) => (
                  <tr key={wf.id}>
                    <td>
                      <Link href={`/workflows/${wf.id}`}>{wf.name}</Link>
                      <div className="muted small mono">{wf.id}</div>
                    </td>
                    <td>
                      <StatusBadge status={wf.status === "FAILED" ? "DEAD" : wf.status} label={wf.status} />
                    </td>
                    <td className="num">{wf.taskCount}</td>
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
          <Pagination
            basePath="/workflows"
            keep={{}}
            after={after}
            prev={prev}
            endCursor={workflows[workflows.length - 1]?.id ?? null}
            hasNextPage={hasOlder}
            shown={workflows.length}
            labels={{ previous: "← Newer", next: "Older →" }}
          />
        </>
      )}
    </>
  );
}
