import { deleteWebhookAction, toggleWebhookAction } from "@/app/(console)/webhooks/actions";
import type { Webhook } from "@/lib/api/types";
import { ConfirmButton } from "../ui/ConfirmButton";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";
import { WebhookActions } from "./WebhookActions";

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
            <tr key={w.id} data-webhook={w.id}>
              <td className="mono webhook-url">
                {w.url}
              </td>
              <td>{w.events.join(", ")}</td>
              <td>
                {w.enabled ? (
                  <StatusBadge status="SUCCEEDED" label="Enabled" />
                ) : (
                  <>
                    <StatusBadge status="DEAD" label="Disabled" />
                    {w.disabledReason ? <div className="muted small">{w.disabledReason}</div> : null}
                  </>
                )}
                {w.previousSecretExpiresAt ? (
                  <div className="muted small">
                    Previous secret also signs, ends <Time iso={w.previousSecretExpiresAt} relative />
                  </div>
                ) : null}
              </td>
              <td>
                <WebhookActions id={w.id}>
                  <ConfirmButton
                    small
                    label={w.enabled ? "Disable" : "Enable"}
                    title={w.enabled ? "Disable this endpoint?" : "Enable this endpoint?"}
                    description={
                      w.enabled
                        ? "No further events are sent to it, and retries already queued are dropped, until you enable it again."
                        : "Events from now on are sent to it again, signed with the same secret. Events while it was disabled are not sent."
                    }
                    confirmLabel={w.enabled ? "Disable" : "Enable"}
                    variant={w.enabled ? "danger" : "primary"}
                    action={toggleWebhookAction}
                    fields={{ id: w.id, enabled: w.enabled ? "false" : "true" }}
                  />
                  <ConfirmButton
                    small
                    label="Delete"
                    title="Delete this endpoint?"
                    description="No further events are sent to it, and deliveries waiting for a retry are marked failed. Its delivery log stays."
                    confirmLabel="Delete endpoint"
                    variant="danger"
                    action={deleteWebhookAction}
                    fields={{ id: w.id }}
                  />
                </WebhookActions>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
