import Link from "next/link";
import type { WebhookDelivery } from "@/lib/api/types";
import { shortId } from "@/lib/format";
import { EmptyState } from "../ui/EmptyState";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

export function DeliveryLog({ deliveries }: { deliveries: WebhookDelivery[] }) {
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
