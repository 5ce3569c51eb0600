/** Cron schedules (contract: MisfirePolicy, OverlapPolicy, TaskTemplateInput, Create/UpdateScheduleInput, Schedule). */
import { MisfirePolicy, OverlapPolicy, Priority } from "@tasklane/core";
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { DateTimeScalar, JSONScalar } from "./scalars.js";
import { BackoffInput } from "./task.js";

registerEnumType(MisfirePolicy, { name: "MisfirePolicy" });
registerEnumType(OverlapPolicy, { name: "OverlapPolicy" });

@InputType("TaskTemplateInput")
export class TaskTemplateInput {
  @Field(() => String)
  type!: string;

  @Field(() => String, { nullable: true })
  queue?: string | null;

  @Field(() => JSONScalar, { nullable: true })
  payload?: unknown;

  @Field(() => Priority, { nullable: true })
  priority?: Priority | null;

  @Field(() => Int, { nullable: true })
  maxAttempts?: number | null;

  @Field(() => BackoffInput, { nullable: true })
  backoff?: BackoffInput | null;

  @Field(() => Int, { nullable: true })
  timeoutSeconds?: number | null;
}

@InputType("CreateScheduleInput")
export class CreateScheduleInput {
  @Field(() => String)
  name!: string;

  @Field(() => String, { description: "5-field cron, or 6 with seconds" })
  cron!: string;

  @Field(() => String, { nullable: true, description: "IANA name, default UTC" })
  timezone?: string | null;

  @Field(() => TaskTemplateInput)
  task!: TaskTemplateInput;

  @Field(() => MisfirePolicy, { nullable: true })
  misfirePolicy?: MisfirePolicy | null;

  @Field(() => OverlapPolicy, { nullable: true })
  overlapPolicy?: OverlapPolicy | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}

@InputType("UpdateScheduleInput")
export class UpdateScheduleInput {
  @Field(() => String, { nullable: true })
  cron?: string | null;

  @Field(() => String, { nullable: true })
  timezone?: string | null;

  @Field(() => TaskTemplateInput, { nullable: true })
  task?: TaskTemplateInput | null;

  @Field(() => MisfirePolicy, { nullable: true })
  misfirePolicy?: MisfirePolicy | null;

  @Field(() => OverlapPolicy, { nullable: true })
  overlapPolicy?: OverlapPolicy | null;

  @Field(() => Boolean, { nullable: true })
  enabled?: boolean | null;
}

/** `runs(first)` is a field resolver (schedule.resolver.ts). */
@ObjectType("Schedule", { simpleResolvers: true })
export class Schedule {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => String)
  cron!: string;

  @Field(() => String)
  timezone!: string;

  @Field(() => Boolean)
  enabled!: boolean;

  @Field(() => Int)
  version!: number;

  @Field(() => MisfirePolicy)
  misfirePolicy!: MisfirePolicy;

  @Field(() => OverlapPolicy)
  overlapPolicy!: OverlapPolicy;

  @Field(() => DateTimeScalar, { nullable: true })
  nextRunAt!: Date | null;

  @Field(() => DateTimeScalar, { nullable: true })
  lastRunAt!: Date | null;
}
