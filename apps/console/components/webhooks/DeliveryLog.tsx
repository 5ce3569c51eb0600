import Link from "next/link";
import type { WebhookDelivery } from "@/lib/api/types";
import { shortId } from "@/lib/format";
import { EmptyState } from "../ui/EmptyState";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

/** When a PENDING delivery is tried next: "in 40 s", or "due now" while it is being sent or waits for a free slot. */
function NextAttempt({ at, now }: { at: string; now: number }) {
  return (
    <div className="muted small nowrap" data-next-attempt>
      next attempt {Date.parse(at) > now + 1_000 ? <Time iso={at} relative now={now} /> : "due now"}
    </div>
  );
}

export function DeliveryLog({ deliveries }: { deliveries: WebhookDelivery[] }) {
  const now = Date.now();
  if (deliveries.length === 0) {
    return (
      <EmptyState title="No deliveries yet" icon="↗">
        Each event sent to an endpoint (and each task callback) is logged here with the response code, or why no response came.
      </EmptyState>
    );
  }
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">To</th>
            <th scope="col">Task</th>
            <th scope="col">Status</th>
            <th scope="col" className="num">
              Response
            </th>
            <th scope="col">Last error</th>
            <th scope="col" className="num">
              Attempts
            </th>
            <th scope="col">Created</th>
            <th scope="col">Delivered</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((d) => (
            <tr key={d.id} data-delivery-id={d.id} data-delivery-event={d.event} data-delivery-status={d.status}>
              <td className="mono">{d.event}</td>
              {/* A task's callbackUrl is sent the same events, signed with the tenant's secret rather than an endpoint's. */}
              <td>{d.webhookId ? "endpoint" : "task callback"}</td>
              <td>
                {d.taskId ? (
                  <Link href={`/tasks/${d.taskId}`} className="mono">
                    {shortId(d.taskId)}
                  </Link>
                ) : (
                  "—"
                )}
              </td>
              <td>
                <StatusBadge status={d.status} />
                {d.status === "PENDING" && d.nextAttemptAt ? <NextAttempt at={d.nextAttemptAt} now={now} /> : null}
              </td>
              <td className="num">{d.lastResponseCode ?? "—"}</td>
              <td className="delivery-error" title={d.lastError ?? undefined}>
                {d.lastError ?? "—"}
              </td>
              <td className="num">{d.attempts}</td>
              <td className="nowrap">
                <Time iso={d.createdAt} relative />
              </td>
              <td className="nowrap">
                <Time iso={d.deliveredAt} relative />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
