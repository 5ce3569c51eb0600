"use client";

import { useState } from "react";
import { RANGES } from "@/lib/task-filters";

/**
 * "Created" with its From/To dates, kept consistent as the user edits them:
 * typing a date chooses "Between…", and choosing any other range clears the
 * dates. The server reads the same rule (lib/task-filters.ts), so a date sent
 * without JavaScript counts too. The form renders the note "f-range-hint" saying so.
 */
export function CreatedRangeFields({ range: initialRange, from: initialFrom, to: initialTo }: { range?: string | undefined; from?: string | undefined; to?: string | undefined }) {
  const [range, setRange] = useState(initialRange ?? "");
  const [from, setFrom] = useState(initialFrom ?? "");
  const [to, setTo] = useState(initialTo ?? "");
  const pickRange = (value: string) => {
    setRange(value);
    if (value !== "custom") {
      setFrom("");
      setTo("");
    }
  };
  const setDate = (set: (v: string) => void) => (value: string) => {
    set(value);
    if (value !== "") setRange("custom");
  };
  return (
    <>
      <div className="field">
        <label htmlFor="f-range">Created</label>
        <select id="f-range" name="range" value={range} onChange={(e) => pickRange(e.target.value)}>
          <option value="">Any time</option>
          {RANGES.map((r) => (
            <option key={r.value} value={r.value}>
              {r.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="f-from">From (UTC)</label>
        <input id="f-from" name="from" type="datetime-local" step={1} value={from} onChange={(e) => setDate(setFrom)(e.target.value)} aria-describedby="f-range-hint" />
      </div>
      <div className="field">
        <label htmlFor="f-to">To (UTC)</label>
        <input id="f-to" name="to" type="datetime-local" step={1} value={to} onChange={(e) => setDate(setTo)(e.target.value)} aria-describedby="f-range-hint" />
      </div>
    </>
  );
}
