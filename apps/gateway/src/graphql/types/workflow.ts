/** Workflows (contract: WorkflowStatus, WorkflowTaskInput, SubmitWorkflowInput, WorkflowTask, Workflow). */
import { Priority, WorkflowStatus } from "@tasklane/core";
import { Field, ID, InputType, Int, ObjectType, registerEnumType } from "type-graphql";
import { DateTimeScalar, JSONScalar } from "./scalars.js";
import { BackoffInput, Task } from "./task.js";

// Described in the served schema: which of FAILED and CANCELLED a workflow ends with is not obvious from the names.
registerEnumType(WorkflowStatus, {
  name: "WorkflowStatus",
  valuesConfig: {
    RUNNING: { description: "some task is not finished yet" },
    SUCCEEDED: { description: "every task succeeded" },
    FAILED: { description: "some task ended DEAD (its dependants are SKIPPED), whatever else was cancelled" },
    CANCELLED: { description: "cancelWorkflow, or cancelTask of one of its tasks (its dependants are SKIPPED) with none DEAD" },
  },
});

@InputType("WorkflowTaskInput")
export class WorkflowTaskInput {
  @Field(() => String, { description: "unique within the workflow" })
  key!: string;

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

  @Field(() => [String], { nullable: true })
  dependsOn?: string[] | null;
}

@InputType("SubmitWorkflowInput")
export class SubmitWorkflowInput {
  @Field(() => String)
  name!: string;

  @Field(() => [WorkflowTaskInput])
  tasks!: WorkflowTaskInput[];

  @Field(() => String, { nullable: true })
  idempotencyKey?: string | null;
}

@ObjectType("WorkflowTask", { simpleResolvers: true })
export class WorkflowTask {
  @Field(() => String)
  key!: string;

  @Field(() => [String])
  dependsOn!: string[];

  @Field(() => Task)
  task!: Task;
}

/** `tasks` is a field resolver (workflow.resolver.ts), batched per request. */
@ObjectType("Workflow", { simpleResolvers: true })
export class Workflow {
  @Field(() => ID)
  id!: string;

  @Field(() => String)
  name!: string;

  @Field(() => WorkflowStatus)
  status!: WorkflowStatus;

  @Field(() => DateTimeScalar)
  createdAt!: Date;

  @Field(() => DateTimeScalar, { nullable: true })
  completedAt!: Date | null;
}
