/** Queues, addressed by name within the caller's tenant. */
import { MAX_QUEUES_PER_TENANT, parseArg, parseInput, upsertQueueInputSchema } from "@tasklane/core";
import { Arg, Ctx, FieldResolver, Mutation, Query, Resolver, Root } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { deletableQueueNameArgSchema, queueNameArgSchema } from "../input-schemas.js";
import { toQueue } from "../mappers.js";
import { Queue, QueueStats, UpsertQueueInput } from "../types/queue.js";

@Resolver(() => Queue)
export class QueueResolver {
  @Query(() => Queue, { nullable: true, description: "null when the caller has no queue of that name; a name no queue could have is BAD_USER_INPUT" })
  async queue(@Arg("name", () => String) name: string, @Ctx() ctx: GatewayContext): Promise<Queue | null> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    // Refused like every other argument (task(id: ""), pauseQueue(name: "")), not answered null.
    const row = await ctx.services.queues.find(caller.tenantId, parseArg(queueNameArgSchema, "name", name));
    return row === null ? null : toQueue(row);
  }

  @Query(() => [Queue])
  async queues(@Ctx() ctx: GatewayContext): Promise<Queue[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return (await ctx.services.queues.list(caller.tenantId)).map(toQueue);
  }

  @FieldResolver(() => QueueStats)
  stats(@Root() queue: Queue, @Ctx() ctx: GatewayContext): Promise<QueueStats> {
    return ctx.loaders.queueStats.load(queue.id);
  }

  @Mutation(() => Queue, {
    description: `creates the queue or updates it by name, leaving omitted fields as they are; a new PUSH queue, or one switched to PUSH, needs endpointUrl; a tenant has at most ${MAX_QUEUES_PER_TENANT.toLocaleString("en-US")} queues: creating one more is QUOTA_EXCEEDED (updates are never refused)`,
  })
  async upsertQueue(@Arg("input", () => UpsertQueueInput) input: UpsertQueueInput, @Ctx() ctx: GatewayContext): Promise<Queue> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const parsed = parseInput(upsertQueueInputSchema, input);
    return toQueue(await ctx.services.queues.upsert(caller.tenantId, parsed));
  }

  @Mutation(() => Queue, { description: "holds QUEUED tasks until resumeQueue" })
  pauseQueue(@Arg("name", () => String) name: string, @Ctx() ctx: GatewayContext): Promise<Queue> {
    return setPaused(ctx, name, true);
  }

  @Mutation(() => Queue, {
    description:
      "cancels the queue's tasks that are not running (QUEUED, SCHEDULED, RETRYING, and BLOCKED workflow tasks, whose dependants are SKIPPED) as cancelTask does, in batches; RUNNING tasks finish; a task submitted while it runs may stay; safe to repeat",
  })
  async purgeQueue(@Arg("name", () => String) name: string, @Ctx() ctx: GatewayContext): Promise<Queue> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    return toQueue(await ctx.services.queues.purge(caller.tenantId, parseArg(queueNameArgSchema, "name", name), `api-key:${caller.apiKeyId}`));
  }

  @Mutation(() => Boolean, {
    description:
      "deletes the queue and its finished tasks, freeing its name and its place under the queue cap; CONFLICT while it has unfinished tasks (purgeQueue first), a live schedule targets it or a running workflow has tasks in it; the default queue is BAD_USER_INPUT",
  })
  async deleteQueue(@Arg("name", () => String) name: string, @Ctx() ctx: GatewayContext): Promise<boolean> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    return ctx.services.queues.delete(caller.tenantId, parseArg(deletableQueueNameArgSchema, "name", name));
  }

  @Mutation(() => Queue)
  resumeQueue(@Arg("name", () => String) name: string, @Ctx() ctx: GatewayContext): Promise<Queue> {
    return setPaused(ctx, name, false);
  }
}

async function setPaused(ctx: GatewayContext, name: string, paused: boolean): Promise<Queue> {
  const caller = requireTenant(ctx.principal, Permission.MANAGE);
  return toQueue(await ctx.services.queues.setPaused(caller.tenantId, parseArg(queueNameArgSchema, "name", name), paused));
}
