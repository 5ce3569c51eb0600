import { DELIVERY_STATUSES, type DeliveryStatus } from "@/lib/statuses";

/** The delivery log's status filter as a plain GET form: the URL is the state, and a new filter starts at the newest page. */
export function DeliveryFilter({ status }: { status: DeliveryStatus | undefined }) {
  return (
    <form method="get" action="/webhooks#log" className="card filters" role="search" aria-label="Filter deliveries">
      <div className="field">
        <label htmlFor="dlv-status">Delivery status</label>
        <select id="dlv-status" name="status" defaultValue={status ?? ""}>
          <option value="">Any status</option>
          {DELIVERY_STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
      </div>
      <div className="actions">
        <button type="submit" className="button">
          Show
        </button>
      </div>
    </form>
  );
}
