import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { AttemptTimeline } from "@/components/tasks/AttemptTimeline";
import { TaskActions } from "@/components/tasks/TaskActions";
import { TaskMeta } from "@/components/tasks/TaskMeta";
import { ReplayButton, ReplayOf } from "@/components/tasks/TaskReplay";
import { ErrorState } from "@/components/ui/ErrorState";
import { JsonBlock } from "@/components/ui/JsonBlock";
import { PageHeader } from "@/components/ui/PageHeader";
import { StatusBadge } from "@/components/ui/StatusBadge";
import { getTask } from "@/lib/api/tasks";
import { decodeSegment } from "@/lib/route-param";
import { param, type SearchParams } from "@/lib/search-params";
import { RescheduleActions } from "@/components/tasks/RescheduleActions";
import { getQueue } from "@/lib/api/queues";
import { noticeDependsOnQueue, taskPageNotice } from "@/lib/task-operations";

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  return { title: `Task ${(await params).id}` };
}

/**
 * No loading.tsx above this page (components/ui/PageLoading.tsx): nothing is
 * sent before the record is read, so an unknown one is a real 404.
 */
export default async function TaskPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> }) {
  const id = decodeSegment((await params).id);
  if (id === null) notFound();
  // What the task's own buttons just did (tasks/actions.ts sends the page here after it).
  const done = param(await searchParams, "done");
  const rescheduled = param(await searchParams, "rescheduled");
  const result = await getTask(id);
  const breadcrumb = <Link href="/tasks">← Tasks</Link>;
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Task" breadcrumb={breadcrumb} />
        <ErrorState error={result.error} what="Task" />
      </>
    );
  }
  const task = result.data;
  if (task === null) notFound();
  // A notice that says when the task runs must not promise it while its queue is paused (unread, it says the usual).
  const queue = noticeDependsOnQueue(done, rescheduled) ? await getQueue(task.queue) : undefined;
  const notice = taskPageNotice(done, rescheduled, queue?.ok === true && queue.data?.paused === true);
  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="row">
            <span className="mono" style={{ fontSize: "1.1rem" }}>
              {task.id}
            </span>
            <span data-testid="task-status">
              <StatusBadge status={task.status} />
            </span>
          </span>
        }
        description={task.cancelRequested && task.status === "CANCELLED" ? "Cancelled while running: its worker was told to stop." : undefined}
        actions={
          <>
            <LiveRefresh taskId={task.id} />
            <RescheduleActions task={task} />
            <TaskActions task={task} />
            <ReplayButton task={task} />
          </>
        }
      />
      {notice !== undefined ? (
        <div className="notice notice-success" role="status" style={{ marginBottom: "1rem" }}>
          {notice}
        </div>
      ) : null}
      <ReplayOf task={task} />
      <div className="stack">
        <section className="card" aria-labelledby="details">
          <h2 id="details">Details</h2>
          <TaskMeta task={task} />
        </section>
        <div className="grid-2">
          <section className="card" aria-labelledby="payload">
            <h2 id="payload">Payload</h2>
            <JsonBlock value={task.payload} empty="No payload." label="Payload JSON" />
          </section>
          <section className="card" aria-labelledby="result">
            <h2 id="result">Result</h2>
            <JsonBlock value={task.result} empty={task.status === "SUCCEEDED" ? "The task succeeded without a result body." : "No result yet."} label="Result JSON" />
          </section>
        </div>
        {task.lastError ? (
          <section className="card" aria-labelledby="error">
            <h2 id="error">Last error</h2>
            <pre className="error-text">{task.lastError}</pre>
          </section>
        ) : null}
        <section className="card" aria-labelledby="attempts">
          <h2 id="attempts">Attempts</h2>
          <AttemptTimeline attempts={task.attemptHistory} />
        </section>
      </div>
    </>
  );
}
