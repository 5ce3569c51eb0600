import type { Metadata } from "next";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { DeliveryLog } from "@/components/webhooks/DeliveryLog";
import { WebhookForm } from "@/components/webhooks/WebhookForm";
import { WebhookTable } from "@/components/webhooks/WebhookTable";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { listDeliveries, listWebhooks } from "@/lib/api/webhooks";

export const metadata: Metadata = { title: "Webhooks" };

export default async function WebhooksPage() {
  const [webhooks, deliveries] = await Promise.all([listWebhooks(), listDeliveries(undefined, 50)]);
  return (
    <>
      <PageHeader title="Webhooks" description="Endpoints that receive your tasks' terminal events, signed with their own secret." actions={<LiveRefresh />} />
      {!webhooks.ok ? (
        <ErrorState error={webhooks.error} what="Webhooks" />
      ) : (
        <div className="stack">
          <section className="card" aria-labelledby="endpoints">
            <h2 id="endpoints">Endpoints</h2>
            {webhooks.data.length === 0 ? (
              <EmptyState title="No endpoints yet" icon="↗">
                Add one below to hear about succeeded, dead, cancelled and skipped tasks without polling.
              </EmptyState>
            ) : (
              <WebhookTable webhooks={webhooks.data} />
            )}
          </section>
          <section className="card" aria-labelledby="add">
            <h2 id="add">Add an endpoint</h2>
            <WebhookForm />
          </section>
          <section aria-labelledby="log">
            <h2 id="log">Delivery log</h2>
            {deliveries.ok ? <DeliveryLog deliveries={deliveries.data} /> : <ErrorState error={deliveries.error} what="Deliveries" />}
          </section>
        </div>
      )}
    </>
  );
}
