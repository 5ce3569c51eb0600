/**
 * rescheduleTask (an addition to the contract): move a waiting task's runAt,
 * or run it now, keeping its id, keys, attempts and place in its workflow and
 * ordering key; Cloud Tasks' RunTask and Trigger.dev's runs.reschedule.
 */
import { parseArg, parseInput, requestedRunAt, rescheduleTimeSchema } from "@tasklane/core";
import { Arg, Ctx, Float, ID, Mutation, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { DateTimeScalar } from "../types/scalars.js";
import { Task } from "../types/task.js";

@Resolver(() => Task)
export class TaskRescheduleResolver {
  @Mutation(() => Task, {
    description:
      "Moves the runAt of a SCHEDULED, QUEUED or RETRYING task: to runAt, or delaySeconds from now (at most one, with submitTask's bounds; a runAt in the past is now), or to now when neither is given (run it now); a task already due keeps its runAt for now, so its place in line and its aging. It then reads QUEUED when due, otherwise SCHEDULED (a RETRYING task stays RETRYING); attempts, keys, workflow and its place in its orderingKey's order stay. BLOCKED, RUNNING or terminal: CONFLICT",
  })
  async rescheduleTask(
    @Arg("id", () => ID) id: string,
    @Arg("runAt", () => DateTimeScalar, { nullable: true }) runAt: Date | null | undefined,
    @Arg("delaySeconds", () => Float, { nullable: true }) delaySeconds: number | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    const taskId = parseArg(idArgSchema, "id", id);
    const time = parseInput(rescheduleTimeSchema, { runAt, delaySeconds });
    const task = await ctx.services.tasks.reschedule(caller.tenantId, taskId, requestedRunAt(time, Date.now()), `api-key:${caller.apiKeyId}`);
    return toTask(task);
  }
}
