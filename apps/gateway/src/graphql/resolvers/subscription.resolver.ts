/**
 * Subscriptions over graphql-ws — placeholder until the realtime issue wires
 * them to task events. Subscribing answers a typed error after the auth check.
 */
import { Arg, ID, Resolver, Root, Subscription, type SubscribeResolverData } from "type-graphql";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { TaskEvent } from "../types/task.js";
import { Workflow } from "../types/workflow.js";
import { notAvailableYet } from "./not-available.js";

type SubscribeData = SubscribeResolverData<unknown, Record<string, unknown>, GatewayContext>;

@Resolver()
export class SubscriptionResolver {
  @Subscription(() => TaskEvent, {
    description: "no arguments: every task of the caller's tenant",
    subscribe: ({ context }: SubscribeData) => notAvailableYet(context, "taskUpdated", Permission.READ),
  })
  taskUpdated(
    @Root() event: TaskEvent,
    @Arg("taskId", () => ID, { nullable: true }) _taskId: string | null,
    @Arg("queue", () => String, { nullable: true }) _queue: string | null,
  ): TaskEvent {
    return event;
  }

  @Subscription(() => Workflow, {
    subscribe: ({ context }: SubscribeData) => notAvailableYet(context, "workflowUpdated", Permission.READ),
  })
  workflowUpdated(@Root() workflow: Workflow, @Arg("workflowId", () => ID) _workflowId: string): Workflow {
    return workflow;
  }
}
