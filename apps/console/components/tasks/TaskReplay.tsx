import Link from "next/link";
import { replayRefusal } from "@tasklane/core/task-replay";
import { replayTaskAction } from "@/app/(console)/tasks/replay-action";
import type { TaskDetail } from "@/lib/api/types";
import { ConfirmButton } from "../ui/ConfirmButton";

/** "Replay" on a finished task the API would replay (core's replayRefusal: not unfinished, not a workflow's). */
export function ReplayButton({ task }: { task: TaskDetail }) {
  if (replayRefusal(task) !== null) return null;
  return (
    <ConfirmButton
      label="Replay"
      title="Replay this task?"
      description="A new task runs now with the same queue, type, payload and settings. This task and its history stay as they are."
      confirmLabel="Replay"
      variant="primary"
      action={replayTaskAction}
      fields={{ id: task.id }}
    />
  );
}

/** On a replay's page: the task it replays. */
export function ReplayOf({ task }: { task: TaskDetail }) {
  if (task.replayOf === null) return null;
  return (
    <p className="notice notice-info" data-testid="replay-of" style={{ marginBottom: "1rem" }}>
      Replay of{" "}
      <Link className="mono" href={`/tasks/${encodeURIComponent(task.replayOf)}`}>
        {task.replayOf}
      </Link>
    </p>
  );
}
