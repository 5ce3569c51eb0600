import { revokeApiKeyAction } from "@/app/(console)/api-keys/actions";
import type { ApiKey } from "@/lib/api/types";
import { ConfirmButton } from "../ui/ConfirmButton";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

function state(key: ApiKey, now: number): { status: string; label: string } {
  if (key.revokedAt) return { status: "DEAD", label: "Revoked" };
  if (key.expiresAt && Date.parse(key.expiresAt) <= now) return { status: "CANCELLED", label: "Expired" };
  return { status: "SUCCEEDED", label: "Active" };
}

export function ApiKeyTable({ keys, currentKeyId, caption }: { keys: ApiKey[]; currentKeyId: string; caption: string }) {
  const now = Date.now();
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => {
            const s = state(key, now);
            const current = key.id === currentKeyId;
            return (
              <tr key={key.id} data-key-name={key.name} data-key-state={s.label}>
                <td>
                  {key.name}
                  {current ? <div className="muted small">this session</div> : null}
                  {key.expiresAt && !key.revokedAt ? (
                    <div className="muted small">
                      expires <Time iso={key.expiresAt} relative />
                    </div>
                  ) : null}
                </td>
                <td className="mono">{key.prefix}</td>
                <td>{key.scopes.join(", ")}</td>
                <td className="nowrap">
                  <Time iso={key.createdAt} relative />
                </td>
                <td className="nowrap">
                  <Time iso={key.lastUsedAt} relative />
                </td>
                <td>
                  <StatusBadge status={s.status} label={s.label} />
                </td>
                <td>
                  {s.label === "Active" && !current ? (
                    <ConfirmButton
                      small
                      label="Revoke"
                      title={`Revoke “${key.name}”?`}
                      description="Every request with this key is refused within seconds. This cannot be undone."
                      confirmLabel="Revoke key"
                      variant="danger"
                      action={revokeApiKeyAction}
                      fields={{ id: key.id }}
                    />
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
