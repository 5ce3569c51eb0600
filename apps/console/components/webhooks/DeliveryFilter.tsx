import { SelectFilter } from "@/components/ui/SelectFilter";
import { DELIVERY_STATUSES, type DeliveryStatus } from "@/lib/statuses";

/** The delivery log's status filter; a new filter starts at the newest page. */
export function DeliveryFilter({ status }: { status: DeliveryStatus | undefined }) {
  return (
    <SelectFilter
      action="/webhooks#log"
      formLabel="Filter deliveries"
      id="dlv-status"
      label="Delivery status"
      name="status"
      value={status}
      anyLabel="Any status"
      options={DELIVERY_STATUSES}
    />
  );
}
