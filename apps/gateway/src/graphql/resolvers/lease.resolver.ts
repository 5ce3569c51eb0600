/** Pull-mode worker calls — placeholder until the pull-worker issue replaces it. */
import { Arg, Ctx, Float, ID, Int, Mutation, Resolver } from "type-graphql";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { JSONScalar } from "../types/scalars.js";
import { HeartbeatResult, Lease, Task } from "../types/task.js";
import { notAvailableYet } from "./not-available.js";

@Resolver()
export class LeaseResolver {
  @Mutation(() => [Lease])
  leaseTasks(
    @Arg("queue", () => String) _queue: string,
    @Arg("workerId", () => String) _workerId: string,
    @Arg("max", () => Int, { nullable: true }) _max: number | null,
    @Arg("leaseSeconds", () => Int, { nullable: true }) _leaseSeconds: number | null,
    @Arg("waitSeconds", () => Float, { nullable: true }) _waitSeconds: number | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<Lease[]> {
    return notAvailableYet(ctx, "leaseTasks", Permission.WORK);
  }

  @Mutation(() => HeartbeatResult)
  heartbeat(
    @Arg("taskId", () => ID) _taskId: string,
    @Arg("leaseToken", () => String) _leaseToken: string,
    @Arg("extendSeconds", () => Int, { nullable: true }) _extendSeconds: number | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<HeartbeatResult> {
    return notAvailableYet(ctx, "heartbeat", Permission.WORK);
  }

  @Mutation(() => Task)
  completeTask(
    @Arg("taskId", () => ID) _taskId: string,
    @Arg("leaseToken", () => String) _leaseToken: string,
    @Arg("result", () => JSONScalar, { nullable: true }) _result: unknown,
    @Ctx() ctx: GatewayContext,
  ): Promise<Task> {
    return notAvailableYet(ctx, "completeTask", Permission.WORK);
  }

  @Mutation(() => Task)
  failTask(
    @Arg("taskId", () => ID) _taskId: string,
    @Arg("leaseToken", () => String) _leaseToken: string,
    @Arg("error", () => String) _error: string,
    @Arg("retryable", () => Boolean, { nullable: true }) _retryable: boolean | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<Task> {
    return notAvailableYet(ctx, "failTask", Permission.WORK);
  }
}
