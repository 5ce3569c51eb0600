/** Cron schedules. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { Schedule, TaskSummary } from "./types";

const SCHEDULE = `id name cron timezone enabled version misfirePolicy overlapPolicy nextRunAt lastRunAt`;
const RUN = `id type queue status priority runAt createdAt completedAt attempts maxAttempts lastError`;

export async function listSchedules(): Promise<ApiResult<Schedule[]>> {
  const result = await gql<{ schedules: Schedule[] }>(`query ConsoleSchedules { schedules { ${SCHEDULE} } }`);
  return result.ok ? { ok: true, data: result.data.schedules } : result;
}

export async function getSchedule(id: string, runs: number): Promise<ApiResult<(Schedule & { runs: TaskSummary[] }) | null>> {
  const result = await gql<{ schedule: (Schedule & { runs: TaskSummary[] }) | null }>(
    `query ConsoleSchedule($id: ID!, $runs: Int) { schedule(id: $id) { ${SCHEDULE} runs(first: $runs) { ${RUN} } } }`,
    { id, runs },
  );
  return result.ok ? { ok: true, data: result.data.schedule } : result;
}

export interface TaskTemplateInput {
  type: string;
  queue?: string | null;
  payload?: unknown;
  priority?: string | null;
  maxAttempts?: number | null;
}

export interface ScheduleFields {
  cron: string;
  timezone: string;
  misfirePolicy: string;
  overlapPolicy: string;
  enabled: boolean;
}

export async function createSchedule(input: ScheduleFields & { name: string; task: TaskTemplateInput }): Promise<ApiResult<Schedule>> {
  const result = await gql<{ createSchedule: Schedule }>(`mutation ConsoleCreateSchedule($input: CreateScheduleInput!) { createSchedule(input: $input) { ${SCHEDULE} } }`, { input });
  return result.ok ? { ok: true, data: result.data.createSchedule } : result;
}

export async function updateSchedule(id: string, input: Partial<ScheduleFields> & { task?: TaskTemplateInput }): Promise<ApiResult<Schedule>> {
  const result = await gql<{ updateSchedule: Schedule }>(
    `mutation ConsoleUpdateSchedule($id: ID!, $input: UpdateScheduleInput!) { updateSchedule(id: $id, input: $input) { ${SCHEDULE} } }`,
    { id, input },
  );
  return result.ok ? { ok: true, data: result.data.updateSchedule } : result;
}

export async function deleteSchedule(id: string): Promise<ApiResult<boolean>> {
  const result = await gql<{ deleteSchedule: boolean }>(`mutation ConsoleDeleteSchedule($id: ID!) { deleteSchedule(id: $id) }`, { id });
  return result.ok ? { ok: true, data: result.data.deleteSchedule } : result;
}

export async function triggerSchedule(id: string): Promise<ApiResult<{ id: string; status: string }>> {
  const result = await gql<{ triggerSchedule: { id: string; status: string } }>(`mutation ConsoleTriggerSchedule($id: ID!) { triggerSchedule(id: $id) { id status } }`, { id });
  return result.ok ? { ok: true, data: result.data.triggerSchedule } : result;
}
