import { taskAction } from "@/app/(console)/tasks/actions";
import type { TaskDetail } from "@/lib/api/types";
import { CANCELLABLE } from "@/lib/statuses";
import { ConfirmButton } from "../ui/ConfirmButton";

/** Only the buttons that make sense for the task's status, each behind a confirmation. */
export function TaskActions({ task }: { task: TaskDetail }) {
  return (
    <>
      {CANCELLABLE.includes(task.status) ? (
        <ConfirmButton
          label="Cancel task"
          title="Cancel this task?"
          description={
            task.status === "RUNNING"
              ? "It is running now: it becomes CANCELLED at once and its worker is told to stop. Any outcome it reports later is refused."
              : "It will not run. This cannot be undone."
          }
          confirmLabel="Cancel task"
          variant="danger"
          action={taskAction}
          fields={{ id: task.id, operation: "cancel" }}
        />
      ) : null}
      {task.status === "DEAD" ? (
        <>
          <ConfirmButton
            label="Redrive"
            title="Redrive this task?"
            description="It goes back to QUEUED with a fresh attempt budget and runs again. Its attempt history is kept."
            confirmLabel="Redrive"
            variant="primary"
            prominent
            action={taskAction}
            fields={{ id: task.id, operation: "redrive" }}
          />
          <ConfirmButton
            label="Discard"
            title="Discard this dead task?"
            description="It leaves the dead-letter queue as CANCELLED and will not run again. Its history is kept."
            confirmLabel="Discard"
            variant="danger"
            action={taskAction}
            fields={{ id: task.id, operation: "discard" }}
          />
        </>
      ) : null}
    </>
  );
}
