import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { deleteScheduleAction, toggleScheduleAction, triggerScheduleAction } from "@/app/(console)/schedules/actions";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { ScheduleForm } from "@/components/schedules/ScheduleForm";
import { ScheduleRuns } from "@/components/schedules/ScheduleRuns";
import { ConfirmButton } from "@/components/ui/ConfirmButton";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { StatusBadge } from "@/components/ui/StatusBadge";
import { Time } from "@/components/ui/Time";
import { listQueueNames } from "@/lib/api/queues";
import { getSchedule } from "@/lib/api/schedules";
import { previewCron, timeZones } from "@/lib/cron-preview";
import { decodeSegment } from "@/lib/route-param";
import { param, type SearchParams } from "@/lib/search-params";

export const metadata: Metadata = { title: "Schedule" };

/**
 * No loading.tsx above this page (components/ui/PageLoading.tsx): nothing is
 * sent before the record is read, so an unknown one is a real 404.
 */
export default async function SchedulePage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<SearchParams> }) {
  const id = decodeSegment((await params).id);
  if (id === null) notFound();
  const created = param(await searchParams, "created");
  const [result, queues] = await Promise.all([getSchedule(id, 25), listQueueNames()]);
  const breadcrumb = <Link href="/schedules">← Schedules</Link>;
  if (!result.ok) {
    return (
      <>
        <PageHeader title="Schedule" breadcrumb={breadcrumb} />
        <ErrorState error={result.error} what="Schedule" />
      </>
    );
  }
  const schedule = result.data;
  if (schedule === null) notFound();
  const latest = schedule.runs[0];
  return (
    <>
      <PageHeader
        breadcrumb={breadcrumb}
        title={
          <span className="row">
            {schedule.name}
            {schedule.enabled ? <StatusBadge status="SUCCEEDED" label="Enabled" /> : <StatusBadge status="CANCELLED" label="Disabled" />}
          </span>
        }
        description={
          <>
            <span className="mono">{schedule.cron}</span> in {schedule.timezone} · version {schedule.version} · next run{" "}
            {schedule.enabled ? <Time iso={schedule.nextRunAt} /> : "— (disabled)"}
          </>
        }
        actions={
          <>
            <LiveRefresh />
            <ConfirmButton
              label="Trigger now"
              title={`Run ${schedule.name} now?`}
              description="One run is submitted at once, outside the cron."
              confirmLabel="Run now"
              variant="primary"
              prominent
              action={triggerScheduleAction}
              fields={{ id: schedule.id }}
            />
            <ConfirmButton
              label={schedule.enabled ? "Disable" : "Enable"}
              title={schedule.enabled ? "Disable this schedule?" : "Enable this schedule?"}
              description={schedule.enabled ? "No further runs fire until you enable it again." : "Runs fire again from the next occurrence on."}
              confirmLabel={schedule.enabled ? "Disable" : "Enable"}
              action={toggleScheduleAction}
              fields={{ id: schedule.id, enabled: schedule.enabled ? "false" : "true" }}
            />
            <ConfirmButton
              label="Delete"
              title="Delete this schedule?"
              description="No further runs fire. Past runs stay in the task list. This cannot be undone."
              confirmLabel="Delete schedule"
              variant="danger"
              action={deleteScheduleAction}
              fields={{ id: schedule.id }}
            />
          </>
        }
      />
      {created ? (
        <div className="notice notice-success" role="status" style={{ marginBottom: "1rem" }}>
          Schedule created.
        </div>
      ) : null}
      <div className="stack">
        <section aria-labelledby="edit">
          <h2 id="edit">Settings</h2>
          <ScheduleForm
            schedule={schedule}
            queues={queues.ok ? queues.data : ["default"]}
            zones={timeZones()}
            initialPreview={previewCron(schedule.cron, schedule.timezone)}
            {...(latest ? { templateHint: `currently ${latest.type} on ${latest.queue}, from the latest run` } : {})}
          />
        </section>
        <section aria-labelledby="runs">
          <h2 id="runs">Run history</h2>
          <ScheduleRuns runs={schedule.runs} />
        </section>
      </div>
    </>
  );
}
