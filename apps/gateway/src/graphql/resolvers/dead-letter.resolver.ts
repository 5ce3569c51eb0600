/**
 * discardTask: the dead-letter queue's counterpart of redriveTask; and the
 * bulk redriveDeadLetterTasks / discardDeadLetterTasks (SQS's redrive all,
 * BullMQ's retryJobs). Not in the contract: additions.
 */
import { parseArg, parseInput } from "@tasklane/core";
import { deadLetterBatchArgsSchema, type DeadLetterBatchArgs } from "@tasklane/core/schemas/dead-letter-batch";
import { Arg, Ctx, ID, Int, Mutation, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { DeadLetterBatch } from "../types/dead-letter.js";
import { Task } from "../types/task.js";

@Resolver(() => Task)
export class DeadLetterResolver {
  @Mutation(() => Task, { description: "DEAD -> CANCELLED: removes a dead task from the dead-letter queue, history kept; not DEAD: CONFLICT" })
  async discardTask(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    const task = await ctx.services.deadLetters.discard(caller.tenantId, parseArg(idArgSchema, "id", id), `api-key:${caller.apiKeyId}`);
    ctx.log.info({ tenantId: caller.tenantId, taskId: task.id }, "dead task discarded");
    return toTask(task);
  }

  @Mutation(() => DeadLetterBatch, {
    description:
      "redriveTask for up to max (default 1000, at most 10000) of the DEAD tasks outside workflows (of queue, or every queue), the one that died first first; call again while hasMore",
  })
  async redriveDeadLetterTasks(
    @Arg("queue", () => String, { nullable: true }) queue: string | null | undefined,
    @Arg("max", () => Int, { nullable: true }) max: number | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<DeadLetterBatch> {
    return inBulk(ctx, { queue, max }, "dead tasks redriven", (tenantId, args, actor) => ctx.services.tasks.redriveDeadLetters(tenantId, args, actor));
  }

  @Mutation(() => DeadLetterBatch, {
    description:
      "discardTask for up to max (default 1000, at most 10000) of the DEAD tasks (of queue, or every queue), the one that died first first; call again while hasMore",
  })
  async discardDeadLetterTasks(
    @Arg("queue", () => String, { nullable: true }) queue: string | null | undefined,
    @Arg("max", () => Int, { nullable: true }) max: number | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<DeadLetterBatch> {
    return inBulk(ctx, { queue, max }, "dead tasks discarded", (tenantId, args, actor) => ctx.services.deadLetters.discardMany(tenantId, args, actor));
  }
}

/** A bulk dead-letter call: the caller's permission and arguments checked, `run` over them, its count logged. */
async function inBulk(
  ctx: GatewayContext,
  raw: { queue: string | null | undefined; max: number | null | undefined },
  logged: string,
  run: (tenantId: string, args: DeadLetterBatchArgs, actor: string) => Promise<DeadLetterBatch>,
): Promise<DeadLetterBatch> {
  const caller = requireTenant(ctx.principal, Permission.SUBMIT);
  const args = parseInput(deadLetterBatchArgsSchema, raw);
  const done = await run(caller.tenantId, args, `api-key:${caller.apiKeyId}`);
  ctx.log.info({ tenantId: caller.tenantId, queue: args.queue, ...done }, logged);
  return done;
}
