/**
 * replayTask (Trigger.dev's runs.replay): a finished task run again as a new
 * task, and Task.replayOf, the link back. Which tasks and what a replay
 * keeps: core's task-replay.ts. The new task is a submission like any other
 * (services/task-service.ts replay, the path submitTask takes): the tenant's
 * quotas, the platform backlog cap, the queue (paused: it waits) and the
 * outbox apply as they do to submitTask; the API rate limit took its token
 * before the operation ran. Not in the contract: an addition.
 */
import { BadUserInputError, NotFoundError, assertReplayable, parseArg, parseInput, replayInput, submitTaskInputSchema, type TaskSpec } from "@tasklane/core";
import type { TaskRecord } from "@tasklane/db";
import { Arg, Ctx, FieldResolver, ID, Mutation, Resolver, Root } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { Task } from "../types/task.js";
import { actorOf, allowPrivate, toSpecs } from "./task.resolver.js";

@Resolver(() => Task)
export class TaskReplayResolver {
  @Mutation(() => Task, {
    description:
      "a new task (due now, no idempotency key, replayOf set) with a finished task's queue, type, payload, metadata, priority, maxAttempts, backoff, timeoutSeconds, callbackUrl and orderingKey; the original is unchanged. Unfinished, or a workflow's task: CONFLICT; unknown or another tenant's (pruned, or deleted with its queue): NOT_FOUND; otherwise refused as submitTask would be",
  })
  async replayTask(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    const originalId = parseArg(idArgSchema, "id", id);
    const original = await ctx.services.tasks.get(caller.tenantId, originalId);
    if (original === null) throw new NotFoundError("Task", originalId);
    assertReplayable(original);
    const spec = replaySpec(original, allowPrivate(ctx));
    // A new trace (the caller's, as submitTask's), linked to the original's.
    const task = await ctx.services.tasks.replay(caller.tenantId, { ...spec, replayOf: original.id }, actorOf(caller), ctx.traceParent, original.traceParent);
    // The answer's replayOf is known: no read for it.
    ctx.loaders.replayOf(caller.tenantId).prime(task.id, original.id);
    ctx.log.info({ tenantId: caller.tenantId, taskId: task.id, replayOf: original.id }, "task replayed");
    return toTask(task);
  }

  @FieldResolver(() => ID, { nullable: true, description: "the task this one replays (replayTask); null for any other task" })
  async replayOf(@Root() task: Task, @Ctx() ctx: GatewayContext): Promise<string | null> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return ctx.loaders.replayOf(caller.tenantId).load(task.id);
  }
}

/**
 * The original's submission through submitTask's own checks (today's limits, the callback URL under today's
 * ALLOW_PRIVATE_TARGETS) and normalisation: a row written under other limits is refused as its submission would
 * be. The caller sent only an id, so the refusal says it is the stored task's field ("payload", "callbackUrl"),
 * not an argument of the request.
 */
function replaySpec(original: TaskRecord, allowPrivateTargets: boolean): TaskSpec {
  try {
    const [spec] = toSpecs([parseInput(submitTaskInputSchema, replayInput(original))], allowPrivateTargets, null);
    if (spec === undefined) throw new Error("toSpecs returned no spec for one input");
    return spec;
  } catch (error) {
    if (!(error instanceof BadUserInputError)) throw error;
    throw new BadUserInputError(`Task ${original.id} cannot be replayed as it was submitted: ${error.message}`, [...error.fieldErrors]);
  }
}
