import {
  DEFAULT_MAX_ATTEMPTS,
  DEFAULT_QUEUE_NAME,
  DEFAULT_TIMEOUT_SECONDS,
  Priority,
  resolveBackoff,
  validateCronPair,
  type BulkRead,
  type BulkReadAllowance,
  type CreateScheduleInput,
  type TaskTemplateInput,
  type UpdateScheduleInput,
} from "@tasklane/core";
import {
  createSchedule,
  deleteSchedule,
  getSchedule,
  listScheduleRuns,
  listSchedules,
  triggerSchedule,
  updateSchedule,
  type Database,
  type DispatchIntent,
  type ScheduleChangeEffects,
  type ScheduleEditor,
  type ScheduleRecord,
  type ScheduleTemplate,
  type TaskRecord,
} from "@tasklane/db";
import { TaskAttr, newTaskTrace } from "@tasklane/observability";

function toTemplate(input: TaskTemplateInput): ScheduleTemplate {
  return {
    type: input.type,
    queue: input.queue ?? DEFAULT_QUEUE_NAME,
    payload: input.payload ?? null,
    priority: input.priority ?? Priority.NORMAL,
    maxAttempts: input.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    backoff: resolveBackoff(input.backoff),
    timeoutSeconds: input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
  };
}

/** Cron schedules: validated input in, storage in packages/db, firing in the scheduler. */
export class ScheduleService {
  constructor(
    private readonly db: Database,
    private readonly dispatch: (intents: DispatchIntent[]) => Promise<void>,
    private readonly horizonMs: number,
    /**
     * Tells a RUNNING run's executor it was cancelled (CANCEL_RUNNING, when a change fires an occurrence that was due).
     * Best effort after the commit: bounded, and it never rejects (services/index.ts logs a failure), so the change is answered.
     */
    private readonly announceCancel: (taskId: string) => Promise<void>,
    /** Platform protection, as for submitTask: a triggered run joins the same backlog (limits/backlog-guard.ts). */
    private readonly backlog?: { assertAccepting(tenantId: string, newTasks: number): void },
    /** SCHEDULE_MISFIRE_GRACE_SECONDS, in ms: absent, core's MISFIRE_GRACE_MS (the variable's default). */
    private readonly misfireGraceMs?: number,
  ) {}

  /**
   * How a change materialises the occurrences due before it (updateSchedule):
   * as the scheduler would, each run its own trace, with the same misfire
   * grace (SCHEDULE_MISFIRE_GRACE_SECONDS: with the default 30 s here, a change
   * during a 2-minute outage under 300 s recorded SKIPPED what the scheduler
   * would have run).
   */
  private editor(actor: string): ScheduleEditor {
    return {
      actor,
      horizonMs: this.horizonMs,
      newTraceParent: () => newTaskTrace("task.scheduled", null, {}),
      ...(this.misfireGraceMs !== undefined ? { graceMs: this.misfireGraceMs } : {}),
    };
  }

  /** After the change's commit: both steps are bounded and never throw (the outbox and the runs' outcomes make up for them). */
  private async publish(effects: ScheduleChangeEffects): Promise<void> {
    await Promise.all([this.dispatch(effects.dispatch), ...effects.cancelledRunning.map((taskId) => this.announceCancel(taskId))]);
  }

  create(tenantId: string, input: CreateScheduleInput): Promise<ScheduleRecord> {
    validateCronPair(input.cron, input.timezone);
    return createSchedule(this.db, tenantId, {
      name: input.name,
      cron: input.cron,
      timezone: input.timezone,
      template: toTemplate(input.task),
      misfirePolicy: input.misfirePolicy ?? "SKIP",
      overlapPolicy: input.overlapPolicy ?? "ALLOW",
      enabled: input.enabled ?? true,
    });
  }

  async update(tenantId: string, id: string, input: UpdateScheduleInput, actor: string): Promise<ScheduleRecord> {
    if (input.cron != null || input.timezone != null) {
      // One of the pair may be new: validate it against the stored other half.
      const current = await getSchedule(this.db, tenantId, id);
      if (current) validateCronPair(input.cron ?? current.cron, input.timezone ?? current.timezone);
    }
    const changes = {
      ...(input.cron != null ? { cron: input.cron } : {}),
      ...(input.timezone != null ? { timezone: input.timezone } : {}),
      ...(input.task != null ? { template: toTemplate(input.task) } : {}),
      ...(input.misfirePolicy != null ? { misfirePolicy: input.misfirePolicy } : {}),
      ...(input.overlapPolicy != null ? { overlapPolicy: input.overlapPolicy } : {}),
      ...(input.enabled != null ? { enabled: input.enabled } : {}),
    };
    const { schedule, ...effects } = await updateSchedule(this.db, tenantId, id, changes, this.editor(actor));
    await this.publish(effects);
    return schedule;
  }

  async delete(tenantId: string, id: string, actor: string): Promise<boolean> {
    await this.publish(await deleteSchedule(this.db, tenantId, id, this.editor(actor)));
    return true;
  }

  get(tenantId: string, id: string): Promise<ScheduleRecord | null> {
    return getSchedule(this.db, tenantId, id);
  }

  list(tenantId: string): Promise<ScheduleRecord[]> {
    return listSchedules(this.db, tenantId);
  }

  /** Each schedule's latest runs, within what the answer has `left` (core's answer-budget.ts). */
  runs(tenantId: string, scheduleIds: string[], first: number, left: BulkReadAllowance): Promise<BulkRead<Map<string, TaskRecord[]>>> {
    return listScheduleRuns(this.db, tenantId, scheduleIds, first, left);
  }

  /** `traceParent`: the caller's own W3C traceparent, which the run's trace then joins. */
  async trigger(tenantId: string, id: string, actor: string, traceParent: string | null = null): Promise<TaskRecord> {
    // A run now is a submission like any other: it went past GLOBAL_MAX_PENDING_TASKS, which refused submitTask.
    this.backlog?.assertAccepting(tenantId, 1);
    const newTraceParent = () => newTaskTrace("task.submit", traceParent, { [TaskAttr.tenantId]: tenantId });
    const { task, dispatch } = await triggerSchedule(this.db, tenantId, id, this.horizonMs, { actor, newTraceParent });
    await this.dispatch(dispatch);
    return task;
  }
}
