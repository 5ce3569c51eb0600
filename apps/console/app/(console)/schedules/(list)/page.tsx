import type { Metadata } from "next";
import Link from "next/link";
import { ScheduleTable } from "@/components/schedules/ScheduleTable";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { listSchedules } from "@/lib/api/schedules";
import { param, type SearchParams } from "@/lib/search-params";

export const metadata: Metadata = { title: "Schedules" };

export default async function SchedulesPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const deleted = param(await searchParams, "deleted");
  const result = await listSchedules();
  const create = (
    <Link className="button button-primary" href="/schedules/new">
      New schedule
    </Link>
  );
  return (
    <>
      <PageHeader title="Schedules" description="Cron schedules: each occurrence submits one task, exactly once." actions={create} />
      {deleted ? (
        <div className="notice notice-success" role="status" style={{ marginBottom: "1rem" }}>
          Schedule deleted. Its past runs stay in the task list.
        </div>
      ) : null}
      {!result.ok ? (
        <ErrorState error={result.error} what="Schedules" />
      ) : result.data.length === 0 ? (
        <EmptyState title="No schedules yet" icon="◷" action={create}>
          Run a task on a cron, in any time zone: reports every weekday at 9, clean-ups every hour.
        </EmptyState>
      ) : (
        <ScheduleTable schedules={result.data} />
      )}
    </>
  );
}
