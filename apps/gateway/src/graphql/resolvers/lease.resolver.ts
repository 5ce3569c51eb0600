/** Pull-mode worker calls: leases fenced by tokens, heartbeats, outcomes. */
import { parseInput } from "@tasklane/core";
import type { GraphQLResolveInfo } from "graphql";
import { Arg, Ctx, Float, ID, Info, Int, Mutation, Resolver } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { completeTasksArgsSchema, failTaskArgsSchema, heartbeatArgsSchema, leaseArgsSchema, leaseTokenArgsSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { selectsField } from "../selection.js";
import { JSONScalar } from "../types/scalars.js";
import { HeartbeatResult, Lease, Task, TaskCompletionInput, TaskCompletionOutcome } from "../types/task.js";

@Resolver()
export class LeaseResolver {
  @Mutation(() => [Lease], { description: "at most max tasks, fewer once their payloads pass 4 MiB of JSON (at least one): the rest wait for the next lease" })
  async leaseTasks(
    @Arg("queue", () => String) queue: string,
    @Arg("workerId", () => String) workerId: string,
    @Arg("max", () => Int, { nullable: true }) max: number | null,
    @Arg("leaseSeconds", () => Int, { nullable: true }) leaseSeconds: number | null,
    @Arg("waitSeconds", () => Float, { nullable: true }) waitSeconds: number | null,
    @Arg("startAheadMs", () => Int, {
      nullable: true,
      description:
        "also lease tasks due within this many ms (0-1000, default 0); each lease's startInMs says how long to hold it before running, so the round trip is off a delayed task's start. A call that waits (waitSeconds) answers once some task is due within half of this, with every task due within all of it",
    })
    startAheadMs: number | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<Lease[]> {
    const caller = requireTenant(ctx.principal, Permission.WORK);
    const args = parseInput(leaseArgsSchema, { queue, workerId, max, leaseSeconds, waitSeconds, startAheadMs });
    const leases = await ctx.services.leases.lease(caller.tenantId, args, ctx.signal);
    return leases.map((l) => ({
      task: toTask(l.task),
      leaseToken: l.leaseToken,
      leaseExpiresAt: l.leaseExpiresAt,
      startInMs: l.startInMs,
      waitedMs: l.waitedMs,
      parents: l.parents ?? null,
    }));
  }

  @Mutation(() => HeartbeatResult)
  async heartbeat(
    @Arg("taskId", () => ID) taskId: string,
    @Arg("leaseToken", () => String) leaseToken: string,
    @Arg("extendSeconds", () => Int, { nullable: true }) extendSeconds: number | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<HeartbeatResult> {
    const caller = requireTenant(ctx.principal, Permission.WORK);
    const args = parseInput(heartbeatArgsSchema, { taskId, leaseToken, extendSeconds });
    return ctx.services.leases.heartbeat(caller.tenantId, args.taskId, args.leaseToken, args.extendSeconds);
  }

  @Mutation(() => Task)
  async completeTask(
    @Arg("taskId", () => ID) taskId: string,
    @Arg("leaseToken", () => String) leaseToken: string,
    @Arg("result", () => JSONScalar, { nullable: true }) result: unknown,
    @Ctx() ctx: GatewayContext,
  ): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.WORK);
    const args = parseInput(leaseTokenArgsSchema, { taskId, leaseToken });
    return toTask(await ctx.services.leases.complete(caller.tenantId, args.taskId, args.leaseToken, result));
  }

  @Mutation(() => [TaskCompletionOutcome], {
    description: "completeTask for many leases in one call (at most 500, each task once); each item is fenced by its own token and refused on its own",
  })
  async completeTasks(
    @Arg("completions", () => [TaskCompletionInput]) completions: TaskCompletionInput[],
    @Ctx() ctx: GatewayContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<TaskCompletionOutcome[]> {
    const caller = requireTenant(ctx.principal, Permission.WORK);
    const items = parseInput(completeTasksArgsSchema, { completions }).completions;
    const completing = items.map((i) => ({ taskId: i.taskId, token: i.leaseToken, result: i.result }));
    // A worker asks only whether each outcome landed (the SDK's Worker does): no task rows to read back.
    const outcomes = !selectsField(info, "task")
      ? await ctx.services.leases.completeMany(caller.tenantId, completing, { withTasks: false })
      : // The tasks' payloads and results come out of the answer's 4 MiB (core's answer-budget.ts), past which they are withheld.
        await ctx.loaders.answerBudget().spend(async (left) => {
          const bodyBudget = { bytes: left.bytes };
          const value = await ctx.services.leases.completeMany(caller.tenantId, completing, { withTasks: true, bodyBudget });
          return { value, used: { bytes: left.bytes - bodyBudget.bytes, rows: 0 } };
        });
    return outcomes.map((o) =>
      "refused" in o
        ? { taskId: o.taskId, accepted: false, task: null, code: o.refused, message: o.message }
        : { taskId: o.taskId, accepted: true, task: o.task ? toTask(o.task) : null, code: null, message: null },
    );
  }

  @Mutation(() => Task)
  async failTask(
    @Arg("taskId", () => ID) taskId: string,
    @Arg("leaseToken", () => String) leaseToken: string,
    @Arg("error", () => String) error: string,
    @Arg("retryable", () => Boolean, { nullable: true }) retryable: boolean | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.WORK);
    const args = parseInput(failTaskArgsSchema, { taskId, leaseToken, error });
    return toTask(await ctx.services.leases.fail(caller.tenantId, args.taskId, args.leaseToken, args.error, retryable ?? true));
  }
}
