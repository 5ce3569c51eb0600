/** Cron schedules: CRUD, manual trigger and run history. Firing happens in the scheduler. */
import { MAX_SCHEDULES_PER_TENANT, createScheduleInputSchema, parseArg, parseInput, updateScheduleInputSchema } from "@tasklane/core";
import type { ScheduleRecord } from "@tasklane/db";
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema, runsFirstSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { CreateScheduleInput, Schedule, UpdateScheduleInput } from "../types/schedule.js";
import { Task } from "../types/task.js";

function toSchedule(r: ScheduleRecord): Schedule {
  return {
    id: r.id,
    name: r.name,
    cron: r.cron,
    timezone: r.timezone,
    enabled: r.enabled,
    version: r.version,
    misfirePolicy: r.misfirePolicy,
    overlapPolicy: r.overlapPolicy,
    nextRunAt: r.nextRunAt,
    lastRunAt: r.lastRunAt,
  };
}

@Resolver(() => Schedule)
export class ScheduleResolver {
  @Query(() => Schedule, { nullable: true })
  async schedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Schedule | null> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const record = await ctx.services.schedules.get(caller.tenantId, parseArg(idArgSchema, "id", id));
    return record ? toSchedule(record) : null;
  }

  @Query(() => [Schedule])
  async schedules(@Ctx() ctx: GatewayContext): Promise<Schedule[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return (await ctx.services.schedules.list(caller.tenantId)).map(toSchedule);
  }

  @FieldResolver(() => [Task], {
    description:
      "materialised runs, newest scheduled time first. One answer reads at most 10,000 runs and workflow tasks (more: BAD_USER_INPUT) and 4 MiB of their payloads and results; past that a run's payload and result answer null with a BAD_USER_INPUT error: read it with task(id)",
  })
  async runs(@Root() schedule: Schedule, @Arg("first", () => Int, { nullable: true }) first: number | null, @Ctx() ctx: GatewayContext): Promise<Task[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const runs = await ctx.loaders.scheduleRuns(caller.tenantId, parseArg(runsFirstSchema, "first", first)).load(schedule.id);
    return runs.map(toTask);
  }

  @Mutation(() => Schedule, {
    description: `at most ${MAX_SCHEDULES_PER_TENANT.toLocaleString("en-US")} live schedules per tenant (a deleted one frees its slot): one more is QUOTA_EXCEEDED. Runs count toward the tenant's dailyTaskQuota and maxPendingTasks; an occurrence past either is recorded SKIPPED, lastError naming the quota`,
  })
  async createSchedule(@Arg("input", () => CreateScheduleInput) input: CreateScheduleInput, @Ctx() ctx: GatewayContext): Promise<Schedule> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    return toSchedule(await ctx.services.schedules.create(caller.tenantId, parseInput(createScheduleInputSchema, input)));
  }

  @Mutation(() => Schedule)
  async updateSchedule(
    @Arg("id", () => ID) id: string,
    @Arg("input", () => UpdateScheduleInput) input: UpdateScheduleInput,
    @Ctx() ctx: GatewayContext,
  ): Promise<Schedule> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    const changes = parseInput(updateScheduleInputSchema, input);
    return toSchedule(await ctx.services.schedules.update(caller.tenantId, parseArg(idArgSchema, "id", id), changes, `api-key:${caller.apiKeyId}`));
  }

  @Mutation(() => Boolean)
  async deleteSchedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<boolean> {
    const caller = requireTenant(ctx.principal, Permission.MANAGE);
    return ctx.services.schedules.delete(caller.tenantId, parseArg(idArgSchema, "id", id), `api-key:${caller.apiKeyId}`);
  }

  @Mutation(() => Task, { description: "run now, outside the cron" })
  async triggerSchedule(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    return toTask(await ctx.services.schedules.trigger(caller.tenantId, parseArg(idArgSchema, "id", id), `api-key:${caller.apiKeyId}`, ctx.traceParent));
  }
}
