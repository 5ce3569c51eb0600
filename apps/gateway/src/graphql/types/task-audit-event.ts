/** Task.events: a task's audit trail, one entry per status change (task_events). */
import { TaskStatus } from "@tasklane/core";
import { Field, ID, Int, ObjectType } from "type-graphql";
import { DateTimeScalar } from "./scalars.js";

@ObjectType("TaskAuditEvent", { simpleResolvers: true, description: "One status change of a task, recorded in the statement that made it" })
export class TaskAuditEvent {
  @Field(() => ID, { description: "ascending in recording order; pass the last one as `after` for the next page" })
  id!: string;
  @Field(() => TaskStatus, { nullable: true, description: "null for the creation event" })
  previousStatus!: TaskStatus | null;
  @Field(() => TaskStatus)
  status!: TaskStatus;
  @Field(() => DateTimeScalar)
  at!: Date;
  @Field(() => Int, { description: "attempts started when the change was made (0 before the first)" })
  attempt!: number;
  @Field(() => Int, { description: "lease (fencing) generation the change was made under" })
  leaseGeneration!: number;
  @Field(() => String, {
    description: "who or what made the change: api-key:<id>, worker:<id>, scheduler, scheduler:lease-expiry, …",
  })
  actor!: string;
  @Field(() => String, { nullable: true })
  reason!: string | null;
}
