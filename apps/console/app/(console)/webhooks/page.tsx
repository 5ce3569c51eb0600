import type { Metadata } from "next";
import { LiveRefresh } from "@/components/live/LiveRefresh";
import { parseCursorStack } from "@/components/tasks/Pagination";
import { DeliveryFilter } from "@/components/webhooks/DeliveryFilter";
import { DeliveryPages } from "@/components/webhooks/DeliveryPages";
import { WebhookForm } from "@/components/webhooks/WebhookForm";
import { WebhookTable } from "@/components/webhooks/WebhookTable";
import { EmptyState } from "@/components/ui/EmptyState";
import { ErrorState } from "@/components/ui/ErrorState";
import { PageHeader } from "@/components/ui/PageHeader";
import { listDeliveries, listWebhooks } from "@/lib/api/webhooks";
import { param, type SearchParams } from "@/lib/search-params";
import { DELIVERY_STATUSES } from "@/lib/statuses";

export const metadata: Metadata = { title: "Webhooks" };

const PAGE_SIZE = 50;

export default async function WebhooksPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const sp = await searchParams;
  // A status the API has not got is no filter (and the form shows "Any status"), not an error page.
  const status = DELIVERY_STATUSES.find((s) => s === param(sp, "status"));
  const after = param(sp, "after");
  const prev = parseCursorStack(param(sp, "prev"));
  // One more than a page: whether there is an older page, without a count the API does not offer.
  const [webhooks, deliveries] = await Promise.all([listWebhooks(), listDeliveries({ status, before: after, first: PAGE_SIZE + 1 })]);
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
            {/* Keyed on the filter so a client navigation (Back to the newest) shows the applied one, not the last chosen. */}
            <DeliveryFilter key={status ?? ""} status={status} />
            <DeliveryPages result={deliveries} pageSize={PAGE_SIZE} status={status} after={after} prev={prev} />
          </section>
        </div>
      )}
    </>
  );
}
