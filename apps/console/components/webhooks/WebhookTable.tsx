import { deleteWebhookAction } from "@/app/(console)/webhooks/actions";
import type { Webhook } from "@/lib/api/types";
import { ConfirmButton } from "../ui/ConfirmButton";
import { StatusBadge } from "../ui/StatusBadge";

export function WebhookTable({ webhooks }: { webhooks: Webhook[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Webhook endpoints</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {webhooks.map((w) => (
            <tr key={w.id}>
              <td className="mono" style={{ wordBreak: "break-all" }}>
                {w.url}
              </td>
              <td>{w.events.join(", ")}</td>
              <td>{w.enabled ? <StatusBadge status="SUCCEEDED" label="Enabled" /> : <StatusBadge status="DEAD" label="Disabled" />}</td>
              <td>
                <ConfirmButton
                  small
                  label="Delete"
                  title="Delete this endpoint?"
                  description="No further events are sent to it. Its delivery log stays."
                  confirmLabel="Delete endpoint"
                  variant="danger"
                  action={deleteWebhookAction}
                  fields={{ id: w.id }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
