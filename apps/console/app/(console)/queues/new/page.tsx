import type { Metadata } from "next";
import Link from "next/link";
import { QueueForm } from "@/components/queues/QueueForm";
import { PageHeader } from "@/components/ui/PageHeader";

export const metadata: Metadata = { title: "New queue" };

export default function NewQueuePage() {
  return (
    <>
      <PageHeader title="New queue" breadcrumb={<Link href="/queues">← Queues</Link>} />
      <QueueForm />
    </>
  );
}
