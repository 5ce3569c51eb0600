/**
 * Subscriptions over graphql-ws, fed by the task-event relay through the
 * process's event hub (realtime/). The tenant is the caller's, from the
 * connection's key; arguments only narrow that tenant's feed.
 */
import { parseArg } from "@tasklane/core";
import type { WorkflowRecord } from "@tasklane/db";
import { Arg, Ctx, ID, Resolver, Root, Subscription, type SubscribeResolverData } from "type-graphql";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { TaskUpdate } from "../../realtime/realtime-service.js";
import type { GatewayContext } from "../context.js";
import { eventIdArgSchema, idArgSchema, queueNameArgSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { TaskEvent } from "../types/task.js";
import { Workflow } from "../types/workflow.js";
import { toWorkflow } from "./workflow.resolver.js";

type SubscribeData = SubscribeResolverData<unknown, Record<string, unknown>, GatewayContext>;

/**
 * A subscription's context lives as long as the subscription, and with it the
 * per-request DataLoaders: clear them for every event, or field resolvers
 * (attemptHistory, Workflow.tasks) would serve the first event's rows forever.
 */
function freshLoaders(ctx: GatewayContext): void {
  ctx.loaders.clearAll();
}

@Resolver()
export class SubscriptionResolver {
  @Subscription(() => TaskEvent, {
    description:
      "no arguments: every task of the caller's tenant; a taskId or queue the tenant does not have: NOT_FOUND. With `after` (a TaskEvent.id): the events after it first, read back, then live ones, in id order and each once (README \"Subscriptions\")",
    subscribe: async ({ args, context }: SubscribeData) => {
      const caller = requireTenant(context.principal, Permission.READ);
      const taskId = args.taskId == null ? null : parseArg(idArgSchema, "taskId", args.taskId);
      const queueName = args.queue == null ? null : parseArg(queueNameArgSchema, "queue", args.queue);
      const after = args.after == null ? null : parseArg(eventIdArgSchema, "after", args.after);
      return context.services.realtime.taskUpdates(caller.tenantId, { taskId, queueName, after });
    },
  })
  taskUpdated(
    @Root() update: TaskUpdate,
    @Ctx() ctx: GatewayContext,
    @Arg("taskId", () => ID, { nullable: true }) _taskId: string | null,
    @Arg("queue", () => String, { nullable: true }) _queue: string | null,
    @Arg("after", () => ID, { nullable: true }) _after: string | null,
  ): TaskEvent {
    freshLoaders(ctx);
    return {
      id: update.event.eventId,
      taskId: update.event.taskId,
      status: update.event.to,
      previousStatus: update.event.from,
      at: new Date(update.event.at),
      task: toTask(update.task),
    };
  }

  @Subscription(() => Workflow, {
    description: "the workflow each time one of its tasks changes status; another tenant's id: NOT_FOUND",
    subscribe: async ({ args, context }: SubscribeData) => {
      const caller = requireTenant(context.principal, Permission.READ);
      return context.services.realtime.workflowUpdates(caller.tenantId, parseArg(idArgSchema, "workflowId", args.workflowId));
    },
  })
  workflowUpdated(@Root() workflow: WorkflowRecord, @Ctx() ctx: GatewayContext, @Arg("workflowId", () => ID) _workflowId: string): Workflow {
    freshLoaders(ctx);
    return toWorkflow(workflow);
  }
}
