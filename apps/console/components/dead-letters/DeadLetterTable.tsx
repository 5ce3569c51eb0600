"use client";

import Link from "next/link";
import { useEffect, useMemo, useState } from "react";
import { bulkDeadLetterAction } from "@/app/(console)/tasks/actions";
import type { TaskSummary } from "@/lib/api/types";
import { shortId } from "@/lib/format";
import { ConfirmButton } from "../ui/ConfirmButton";
import { Time } from "../ui/Time";

/** Dead tasks with a selection column; the toolbar acts on the selection after asking. */
export function DeadLetterTable({ tasks, now }: { tasks: TaskSummary[]; now: number }) {
  const [picked, setPicked] = useState<Set<string>>(new Set());
  // A task that leaves the list (redriven, discarded, here or elsewhere) leaves the selection for
  // good: should it die again and come back, it must not come back ticked.
  useEffect(() => {
    setPicked((current) => {
      const listed = new Set(tasks.map((t) => t.id));
      const kept = [...current].filter((id) => listed.has(id));
      return kept.length === current.size ? current : new Set(kept);
    });
  }, [tasks]);
  const selected = useMemo(() => tasks.filter((t) => picked.has(t.id)).map((t) => t.id), [tasks, picked]);
  // After a bulk action the next one starts from nothing ticked.
  const clear = () => setPicked(new Set());
  const allSelected = selected.length === tasks.length && tasks.length > 0;
  const toggle = (id: string) =>
    setPicked((current) => {
      const next = new Set(current);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  const n = selected.length;
  const noun = `${n} task${n === 1 ? "" : "s"}`;
  return (
    <>
      <div className="card row" style={{ justifyContent: "space-between", marginBottom: "0.75rem" }}>
        <span aria-live="polite">{n === 0 ? "Select tasks to act on them." : `${noun} selected.`}</span>
        <span className="row">
          <ConfirmButton
            label="Redrive selected"
            title={`Redrive ${noun}?`}
            description="Each goes back to QUEUED with a fresh attempt budget and runs again."
            confirmLabel={`Redrive ${noun}`}
            variant="primary"
            prominent
            action={bulkDeadLetterAction}
            fields={{ ids: selected, operation: "redrive" }}
            disabled={n === 0}
            onSuccess={clear}
          />
          <ConfirmButton
            label="Discard selected"
            title={`Discard ${noun}?`}
            description="They leave the dead-letter queue as CANCELLED and will not run again. Their history is kept."
            confirmLabel={`Discard ${noun}`}
            variant="danger"
            action={bulkDeadLetterAction}
            fields={{ ids: selected, operation: "discard" }}
            disabled={n === 0}
            onSuccess={clear}
          />
        </span>
      </div>
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Dead tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select all tasks on this page"
                  checked={allSelected}
                  onChange={() => setPicked(allSelected ? new Set() : new Set(tasks.map((t) => t.id)))}
                />
              </th>
              <th scope="col">Task</th>
              <th scope="col">Type</th>
              <th scope="col">Queue</th>
              <th scope="col">Last error</th>
              <th scope="col" className="num">
                Attempts
              </th>
              <th scope="col">Died</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((task) => (
              <tr key={task.id} data-task-id={task.id}>
                <td>
                  <input type="checkbox" aria-label={`Select ${task.id}`} checked={picked.has(task.id)} onChange={() => toggle(task.id)} />
                </td>
                <td className="nowrap">
                  <Link href={`/tasks/${task.id}`} className="mono" title={task.id}>
                    {shortId(task.id)}
                  </Link>
                </td>
                <td className="truncate" title={task.type}>
                  {task.type}
                </td>
                <td>{task.queue}</td>
                <td className="truncate" title={task.lastError ?? undefined}>
                  {task.lastError ?? "—"}
                </td>
                <td className="num">
                  {task.attempts}/{task.maxAttempts}
                </td>
                <td className="nowrap">
                  <Time iso={task.completedAt} relative now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}
