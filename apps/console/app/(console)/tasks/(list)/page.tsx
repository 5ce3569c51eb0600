import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { Pagination, parseCursorStack } from "@/components/tasks/Pagination";
import { PastTheEnd } from "@/components/tasks/PastTheEnd";
import { TaskFilters } from "@/components/tasks/TaskFilters";
import { TaskTable } from "@/components/tasks/TaskTable";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { listQueueNames } from "@/lib/api/queues";
import { getTask, listTasks } from "@/lib/api/tasks";
import { param, query, type SearchParams } from "@/lib/search-params";
import { effectiveValues, toFilter } from "@/lib/task-filters";

export const metadata: Metadata = { title: "Tasks" };

const PAGE_SIZE = 50;

export default async function TasksPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  // What the list applies is what the form shows (and what the page links keep).
  const values = effectiveValues({
    status: param(sp, "status"),
    queue: param(sp, "queue"),
    type: param(sp, "type"),
    range: param(sp, "range"),
    from: param(sp, "from"),
    to: param(sp, "to"),
    id: param(sp, "id"),
  });
  let idMiss: string | null = null;
  if (values.id) {
    const found = await getTask(values.id);
    if (found.ok && found.data) redirect(`/tasks/${found.data.id}`);
    idMiss = values.id;
  }
  const after = param(sp, "after");
  const prevStack = parseCursorStack(param(sp, "prev"));
  const [page, queues] = await Promise.all([listTasks(toFilter(values, Date.now()), PAGE_SIZE, after), listQueueNames()]);
  const queueNames = queues.ok ? queues.data : [];
  const filtered = Object.entries(values).some(([k, v]) => k !== "id" && v);
  const keep = { status: values.status, queue: values.queue, type: values.type, range: values.range, from: values.from, to: values.to };

  return (
    <>
      <PageHeader title="Tasks" description="Every task of your tenant, newest first." actions={<LiveRefresh {...(values.queue ? { queue: values.queue } : {})} />} />
      {/* Keyed on the filters so a client navigation (Reset, a link) shows the new ones, not the last typed. */}
      <TaskFilters key={JSON.stringify(values)} values={values} queues={queueNames} />
      {idMiss ? (
        <div className="notice notice-info" role="status" style={{ marginBottom: "1rem" }}>
          No task with id <code>{idMiss}</code> in this tenant. Ids look like <code>task_0192…</code>; paste the whole id.
        </div>
      ) : null}
      {!page.ok ? (
        <ErrorState error={page.error} what="Tasks" />
      ) : page.data.nodes.length === 0 ? (
        after && page.data.totalCount > 0 ? (
          <PastTheEnd noun={{ one: "task", many: "tasks" }} total={page.data.totalCount} firstPage={`/tasks${query(keep)}`} />
        ) : filtered ? (
          <EmptyState title="No tasks match these filters" icon="⌕">
            Widen the time range or clear a filter to see more.
          </EmptyState>
        ) : (
          <EmptyState title="No tasks yet" icon="▶">
            Submit a task through the API (submitTask) or the SDK and it shows up here, live.
          </EmptyState>
        )
      ) : (
        <>
          <TaskTable tasks={page.data.nodes} caption="Tasks matching the filters, newest first" />
          <Pagination
            basePath="/tasks"
            keep={keep}
            after={after}
            prev={prevStack}
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
