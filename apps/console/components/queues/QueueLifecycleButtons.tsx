import { deleteQueueAction, purgeQueueAction } from "@/app/(console)/queues/actions";
import type { Queue } from "@/lib/api/types";
import { ConfirmButton } from "../ui/ConfirmButton";

/** The default queue is every tenant's (the SDK's queue when none is named): the API refuses to delete it. */
const DEFAULT_QUEUE = "default";

/**
 * Purge and delete, each behind a confirmation that says what goes. The API's refusal (a queue with
 * unfinished tasks, a schedule or a running workflow: CONFLICT) is shown beside the button.
 */
export function QueueLifecycleButtons({ queue }: { queue: Pick<Queue, "name" | "stats"> }) {
  const { name, stats } = queue;
  const waiting = stats.queued + stats.scheduled + stats.retrying;
  const finished = stats.succeeded + stats.dead;
  return (
    <>
      <ConfirmButton
        label="Purge"
        title={`Purge ${name}?`}
        description={`Cancels every task of ${name} that is not running (${waiting.toLocaleString("en-US")} waiting now, and workflow tasks not yet released), as Cancel would: webhooks hear task.cancelled, and a workflow's later tasks are skipped. Running tasks finish. This cannot be undone.`}
        confirmLabel="Purge"
        variant="danger"
        action={purgeQueueAction}
        fields={{ name }}
      />
      {name === DEFAULT_QUEUE ? null : (
        <ConfirmButton
          label="Delete"
          title={`Delete ${name}?`}
          description={`Deletes ${name} with its finished tasks (${finished.toLocaleString("en-US")} succeeded or dead, and the cancelled ones), their attempts and audit trails, and frees its name. Only a queue with nothing waiting or running can be deleted: purge it first. This cannot be undone.`}
          confirmLabel="Delete queue"
          variant="danger"
          action={deleteQueueAction}
          fields={{ name }}
        />
      )}
    </>
  );
}
