import { pauseQueueAction } from "@/app/(console)/queues/actions";
import { ConfirmButton } from "../ui/ConfirmButton";

export function PauseButton({ name, paused, small = false }: { name: string; paused: boolean; small?: boolean }) {
  return paused ? (
    <ConfirmButton
      small={small}
      label="Resume"
      title={`Resume ${name}?`}
      description="Queued tasks start running again."
      confirmLabel="Resume"
      variant="primary"
      action={pauseQueueAction}
      fields={{ name, pause: "false" }}
    />
  ) : (
    <ConfirmButton
      small={small}
      label="Pause"
      title={`Pause ${name}?`}
      description="Queued tasks wait (nothing is lost) until you resume it. Running tasks finish."
      confirmLabel="Pause"
      variant="danger"
      action={pauseQueueAction}
      fields={{ name, pause: "true" }}
    />
  );
}
