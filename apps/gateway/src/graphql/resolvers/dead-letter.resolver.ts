/** discardTask: the dead-letter queue's counterpart of redriveTask. Not in the contract: an addition. */
import { parseArg } from "@tasklane/core";
import { Arg, Ctx, ID, Mutation, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
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
}
