/**
 * Cron schedules (contract: createSchedule, updateSchedule, deleteSchedule,
 * triggerSchedule, schedule, schedules, Schedule.runs).
 */
import { SCHEDULE_FIELDS, TASK_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import { deleteCall } from "./delete-call.js";
import type { CreateScheduleInput, Schedule, Task, UpdateScheduleInput } from "../types.js";

const CREATE = `mutation CreateSchedule($input: CreateScheduleInput!) { createSchedule(input: $input) { ...ScheduleFields } }
${SCHEDULE_FIELDS}`;
const UPDATE = `mutation UpdateSchedule($id: ID!, $input: UpdateScheduleInput!) { updateSchedule(id: $id, input: $input) { ...ScheduleFields } }
${SCHEDULE_FIELDS}`;
const DELETE = `mutation DeleteSchedule($id: ID!) { deleteSchedule(id: $id) }`;
const TRIGGER = `mutation TriggerSchedule($id: ID!) { triggerSchedule(id: $id) { ...TaskFields } }
${TASK_FIELDS}`;
const GET = `query Schedule($id: ID!) { schedule(id: $id) { ...ScheduleFields } }
${SCHEDULE_FIELDS}`;
const LIST = `query Schedules { schedules { ...ScheduleFields } }
${SCHEDULE_FIELDS}`;
const RUNS = `query ScheduleRuns($id: ID!, $first: Int) { schedule(id: $id) { runs(first: $first) { ...TaskFields } } }
${TASK_FIELDS}`;

export class SchedulesResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  async create<TPayload = unknown>(input: CreateScheduleInput<TPayload>, opts?: CallOptions): Promise<Schedule> {
    const data = await this.#transport.execute<{ createSchedule: Schedule }>(
      { operation: "createSchedule", document: CREATE, idempotent: false },
      { input },
      opts,
    );
    return data.createSchedule;
  }

  /** Omitted or null fields are left as they are. */
  async update<TPayload = unknown>(id: string, input: UpdateScheduleInput<TPayload>, opts?: CallOptions): Promise<Schedule> {
    const data = await this.#transport.execute<{ updateSchedule: Schedule }>(
      { operation: "updateSchedule", document: UPDATE, idempotent: true },
      { id, input },
      opts,
    );
    return data.updateSchedule;
  }

  async delete(id: string, opts?: CallOptions): Promise<boolean> {
    return deleteCall(this.#transport, "deleteSchedule", DELETE, { id }, opts);
  }

  /** Runs the schedule's task now, outside the cron. */
  async trigger(id: string, opts?: CallOptions): Promise<Task> {
    const data = await this.#transport.execute<{ triggerSchedule: Task }>({ operation: "triggerSchedule", document: TRIGGER, idempotent: false }, { id }, opts);
    return data.triggerSchedule;
  }

  async get(id: string, opts?: CallOptions): Promise<Schedule | null> {
    const data = await this.#transport.execute<{ schedule: Schedule | null }>({ operation: "schedule", document: GET, idempotent: true }, { id }, opts);
    return data.schedule;
  }

  async list(opts?: CallOptions): Promise<Schedule[]> {
    const data = await this.#transport.execute<{ schedules: Schedule[] }>({ operation: "schedules", document: LIST, idempotent: true }, {}, opts);
    return data.schedules;
  }

  /** Materialised runs, newest scheduled time first; null when the schedule does not exist. */
  async runs(id: string, first?: number, opts?: CallOptions): Promise<Task[] | null> {
    const data = await this.#transport.execute<{ schedule: { runs: Task[] } | null }>(
      { operation: "schedule", document: RUNS, idempotent: true },
      { id, first },
      opts,
    );
    return data.schedule?.runs ?? null;
  }
}
