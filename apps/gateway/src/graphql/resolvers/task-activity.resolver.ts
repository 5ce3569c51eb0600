/** queueActivity: recent outcomes per queue for charts. Not in the contract: an addition. */
import { parseInput } from "@tasklane/core";
import { z } from "zod";
import { Arg, Ctx, Int, Query, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { QueueActivity } from "../types/task-activity.js";

/** At most a day, at most 288 buckets (a day in 5-minute steps). */
const activityArgsSchema = z
  .object({
    minutes: z.number().int().min(1).max(1440).nullish().transform((v) => v ?? 60),
    bucketMinutes: z.number().int().min(1).max(60).nullish().transform((v) => v ?? 5),
  })
  .refine((a) => a.minutes / a.bucketMinutes <= 288, { message: "at most 288 buckets", path: ["bucketMinutes"] });

@Resolver(() => QueueActivity)
export class TaskActivityResolver {
  @Query(() => [QueueActivity], { description: "finished attempts per queue over the last `minutes` (default 60) in `bucketMinutes` buckets (default 5)" })
  async queueActivity(
    @Arg("minutes", () => Int, { nullable: true }) minutes: number | null | undefined,
    @Arg("bucketMinutes", () => Int, { nullable: true }) bucketMinutes: number | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<QueueActivity[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const window = parseInput(activityArgsSchema, { minutes, bucketMinutes });
    return ctx.services.taskActivity.recent(caller.tenantId, window);
  }
}
