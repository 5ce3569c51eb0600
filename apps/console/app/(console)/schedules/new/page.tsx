import type { Metadata } from "next";
import Link from "next/link";
import { ScheduleForm } from "@/components/schedules/ScheduleForm";
import { PageHeader } from "@/components/ui/PageHeader";
import { listQueueNames } from "@/lib/api/queues";
import { previewCron, timeZones } from "@/lib/cron-preview";

export const metadata: Metadata = { title: "New schedule" };

export default async function NewSchedulePage() {
  const queues = await listQueueNames();
  return (
    <>
      <PageHeader title="New schedule" breadcrumb={<Link href="/schedules">← Schedules</Link>} />
      <ScheduleForm queues={queues.ok ? queues.data : ["default"]} zones={timeZones()} initialPreview={previewCron("0 9 * * 1-5", "UTC")} />
    </>
  );
}
