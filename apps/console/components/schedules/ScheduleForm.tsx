"use client";

import Link from "next/link";
import { useState } from "react";
import { saveScheduleAction } from "@/app/(console)/schedules/actions";
import type { Schedule } from "@/lib/api/types";
import type { CronPreview as Preview } from "@/lib/cron-preview";
import { MISFIRE_POLICIES, OVERLAP_POLICIES, PRIORITIES } from "@/lib/statuses";
import { Field } from "../ui/Field";
import { FormStatus } from "../ui/FormStatus";
import { SubmitButton } from "../ui/SubmitButton";
import { useFormAction } from "../ui/useFormAction";
import { CronPreview } from "./CronPreview";
import { TaskTemplateFields } from "./TaskTemplateFields";

const MISFIRE_HINTS: Record<string, string> = {
  SKIP: "missed runs are recorded as SKIPPED",
  FIRE_ONCE: "one run on recovery for all missed ones",
  CATCH_UP: "one run per missed occurrence",
};
const OVERLAP_HINTS: Record<string, string> = {
  ALLOW: "runs may overlap",
  SKIP: "skip while the previous run is unfinished",
  QUEUE: "start when the previous run finishes",
  CANCEL_RUNNING: "cancel the previous run, then start",
};

/**
 * Create (no `schedule`) or edit a schedule; the cron field previews its next
 * runs in the chosen zone. Enabling is not part of editing: the page's
 * Enable/Disable button owns it.
 */
export function ScheduleForm({
  schedule,
  queues,
  zones,
  initialPreview,
  templateHint,
}: {
  schedule?: Schedule;
  queues: string[];
  zones: string[];
  initialPreview: Preview | null;
  templateHint?: string;
}) {
  const { state, formProps } = useFormAction(saveScheduleAction);
  const [cron, setCron] = useState(schedule?.cron ?? "0 9 * * 1-5");
  const [timezone, setTimezone] = useState(schedule?.timezone ?? "UTC");
  const [replaceTask, setReplaceTask] = useState(schedule === undefined);
  const errors = state.fieldErrors ?? {};
  return (
    <form {...formProps} className="form card" aria-label={schedule ? "Edit schedule" : "New schedule"}>
      {schedule ? <input type="hidden" name="id" value={schedule.id} /> : null}
      {schedule ? null : (
        <Field id="name" label="Name" hint="Unique among your schedules, e.g. nightly-report." error={errors.name}>
          {(p) => <input {...p} name="name" type="text" required maxLength={200} autoComplete="off" />}
        </Field>
      )}
      <div className="form-row">
        <Field id="cron" label="Cron expression" hint="5 fields (minute hour day month weekday) or 6 with seconds first." error={errors.cron}>
          {(p) => <input {...p} name="cron" type="text" required value={cron} onChange={(e) => setCron(e.target.value)} spellCheck={false} autoComplete="off" className="mono" />}
        </Field>
        <Field id="timezone" label="Time zone" hint="IANA name, e.g. Europe/Berlin. DST is handled." error={errors.timezone}>
          {(p) => (
            <>
              <input {...p} name="timezone" type="text" list="zones" value={timezone} onChange={(e) => setTimezone(e.target.value)} autoComplete="off" />
              <datalist id="zones">
                {zones.map((z) => (
                  <option key={z} value={z} />
                ))}
              </datalist>
            </>
          )}
        </Field>
      </div>
      <CronPreview cron={cron} timezone={timezone} initial={initialPreview} />
      <div className="form-row">
        <Field id="misfirePolicy" label="When runs are missed" error={errors.misfirePolicy}>
          {(p) => (
            <select {...p} name="misfirePolicy" defaultValue={schedule?.misfirePolicy ?? "SKIP"}>
              {MISFIRE_POLICIES.map((m) => (
                <option key={m} value={m}>
                  {m} — {MISFIRE_HINTS[m]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field id="overlapPolicy" label="When runs overlap" error={errors.overlapPolicy}>
          {(p) => (
            <select {...p} name="overlapPolicy" defaultValue={schedule?.overlapPolicy ?? "ALLOW"}>
              {OVERLAP_POLICIES.map((o) => (
                <option key={o} value={o}>
                  {o} — {OVERLAP_HINTS[o]}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      {schedule ? (
        <label className="choice">
          <input type="checkbox" name="replaceTask" checked={replaceTask} onChange={(e) => setReplaceTask(e.target.checked)} /> Replace the task template
          {templateHint ? <span className="muted small"> ({templateHint})</span> : null}
        </label>
      ) : (
        <label className="choice">
          <input type="checkbox" name="enabled" defaultChecked /> Enabled
        </label>
      )}
      {replaceTask ? <TaskTemplateFields queues={queues} priorities={PRIORITIES} errors={errors} /> : null}
      <FormStatus state={state} />
      <div className="row">
        <SubmitButton pending="Saving…">{schedule ? "Save changes" : "Create schedule"}</SubmitButton>
        <Link className="button" href="/schedules">
          Cancel
        </Link>
      </div>
    </form>
  );
}
