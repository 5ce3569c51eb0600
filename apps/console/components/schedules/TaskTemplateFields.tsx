import { Field } from "../ui/Field";

/** The task each run submits (the contract's TaskTemplateInput). */
export function TaskTemplateFields({ queues, priorities, errors }: { queues: string[]; priorities: readonly string[]; errors: Record<string, string> }) {
  return (
    <fieldset>
      <legend className="label">Task to run</legend>
      <div className="stack">
        <div className="form-row">
          <Field id="taskType" label="Task type" hint="What your handler switches on, e.g. send-report." error={errors.taskType}>
            {(p) => <input {...p} name="taskType" type="text" required maxLength={200} autoComplete="off" />}
          </Field>
          <Field id="taskQueue" label="Queue" error={errors.taskQueue}>
            {(p) => (
              <select {...p} name="taskQueue" defaultValue={queues.includes("default") ? "default" : queues[0]}>
                {queues.map((q) => (
                  <option key={q} value={q}>
                    {q}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <div className="form-row">
          <Field id="taskPriority" label="Priority" error={errors.taskPriority}>
            {(p) => (
              <select {...p} name="taskPriority" defaultValue="NORMAL">
                {priorities.map((pr) => (
                  <option key={pr} value={pr}>
                    {pr}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field id="taskMaxAttempts" label="Max attempts" hint="Attempts in all, the first included. Blank: the default." error={errors.taskMaxAttempts}>
            {(p) => <input {...p} name="taskMaxAttempts" type="number" min={1} max={100} inputMode="numeric" />}
          </Field>
        </div>
        <Field id="taskPayload" label="Payload (JSON)" hint="Optional; up to 256 KiB." error={errors.taskPayload}>
          {(p) => <textarea {...p} name="taskPayload" rows={4} spellCheck={false} placeholder='{"report": "daily"}' />}
        </Field>
      </div>
    </fieldset>
  );
}
