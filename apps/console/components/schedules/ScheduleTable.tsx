import Link from "next/link";
import { toggleScheduleAction, triggerScheduleAction } from "@/app/(console)/schedules/actions";
import type { Schedule } from "@/lib/api/types";
import { ConfirmButton } from "../ui/ConfirmButton";
import { StatusBadge } from "../ui/StatusBadge";
import { Time } from "../ui/Time";

export function ScheduleTable({ schedules }: { schedules: Schedule[] }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="visually-hidden">Schedules</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Cron</th>
            <th scope="col">Time zone</th>
            <th scope="col">State</th>
            <th scope="col">Next run</th>
            <th scope="col" className="hide-sm">
              Last run
            </th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {schedules.map((s) => (
            <tr key={s.id} data-schedule={s.name}>
              <td>
                <Link href={`/schedules/${s.id}`}>{s.name}</Link>
              </td>
              <td className="mono nowrap">{s.cron}</td>
              <td>{s.timezone}</td>
              <td>{s.enabled ? <StatusBadge status="SUCCEEDED" label="Enabled" /> : <StatusBadge status="CANCELLED" label="Disabled" />}</td>
              <td className="nowrap">{s.enabled ? <Time iso={s.nextRunAt} relative /> : <span className="muted">—</span>}</td>
              <td className="nowrap hide-sm">
                <Time iso={s.lastRunAt} relative />
              </td>
              <td>
                <span className="row" style={{ flexWrap: "nowrap" }}>
                  <ConfirmButton
                    small
                    label="Trigger now"
                    title={`Run ${s.name} now?`}
                    description="One run is submitted at once, outside the cron. The schedule itself is unchanged."
                    confirmLabel="Run now"
                    variant="primary"
                    action={triggerScheduleAction}
                    fields={{ id: s.id }}
                  />
                  <ConfirmButton
                    small
                    label={s.enabled ? "Disable" : "Enable"}
                    title={s.enabled ? `Disable ${s.name}?` : `Enable ${s.name}?`}
                    description={s.enabled ? "No further runs fire until you enable it again." : "Runs fire again from the next occurrence on."}
                    confirmLabel={s.enabled ? "Disable" : "Enable"}
                    variant={s.enabled ? "danger" : "primary"}
                    action={toggleScheduleAction}
                    fields={{ id: s.id, enabled: s.enabled ? "false" : "true" }}
                  />
                </span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
