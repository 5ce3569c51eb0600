/** Cron schedules — placeholder until the scheduling issue replaces it. */
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { CreateScheduleInput, Schedule, UpdateScheduleInput } from "../types/schedule.js";
import { Task } from "../types/task.js";
import { notAvailableYet } from "./not-available.js";

@Resolver(() => Schedule)
export class ScheduleResolver {
  @Query(() => Schedule, { nullable: true })
  schedule(@Arg("id", () => ID) _id: string, @Ctx() ctx: GatewayContext): Promise<Schedule | null> {
    return notAvailableYet(ctx, "schedule", Permission.READ);
  }

  @Query(() => [Schedule])
  schedules(@Ctx() ctx: GatewayContext): Promise<Schedule[]> {
    return notAvailableYet(ctx, "schedules", Permission.READ);
  }

  @FieldResolver(() => [Task], { description: "materialised runs, newest scheduled time first" })
  runs(@Root() _schedule: Schedule, @Arg("first", () => Int, { nullable: true }) _first: number | null, @Ctx() ctx: GatewayContext): Promise<Task[]> {
    return notAvailableYet(ctx, "Schedule.runs", Permission.READ);
  }

  @Mutation(() => Schedule)
  createSchedule(@Arg("input", () => CreateScheduleInput) _input: CreateScheduleInput, @Ctx() ctx: GatewayContext): Promise<Schedule> {
    return notAvailableYet(ctx, "createSchedule", Permission.MANAGE);
  }

  @Mutation(() => Schedule)
  updateSchedule(
    @Arg("id", () => ID) _id: string,
    @Arg("input", () => UpdateScheduleInput) _input: UpdateScheduleInput,
    @Ctx() ctx: GatewayContext,
  ): Promise<Schedule> {
    return notAvailableYet(ctx, "updateSchedule", Permission.MANAGE);
  }

  @Mutation(() => Boolean)
  deleteSchedule(@Arg("id", () => ID) _id: string, @Ctx() ctx: GatewayContext): Promise<boolean> {
    return notAvailableYet(ctx, "deleteSchedule", Permission.MANAGE);
  }

  @Mutation(() => Task, { description: "run now, outside the cron" })
  triggerSchedule(@Arg("id", () => ID) _id: string, @Ctx() ctx: GatewayContext): Promise<Task> {
    return notAvailableYet(ctx, "triggerSchedule", Permission.SUBMIT);
  }
}
