/**
 * Task queries and the submit/cancel/redrive mutations. Storage is behind
 * services/task-service.ts; this file validates, authorises and maps.
 */
import {
  auditPageSchema,
  BadUserInputError,
  checkOutboundUrl,
  deadLetterPageSchema,
  normalizeTaskSpec,
  parseArg,
  parseInput,
  submitTaskInputSchema,
  submitTasksInputSchema,
  taskFilterSchema,
  taskPageSchema,
  type TaskSpec,
} from "@tasklane/core";
import type { TaskPage } from "@tasklane/db";
import type { GraphQLResolveInfo } from "graphql";
import { Arg, Ctx, FieldResolver, ID, Info, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { TenantPrincipal } from "../../auth/principal.js";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema, queueNameArgSchema } from "../input-schemas.js";
import { toAttempt, toTask, toTaskAuditEvent } from "../mappers.js";
import { selectsField, selectsOnly } from "../selection.js";
import { Attempt, SubmitTaskInput, Task, TaskConnection, TaskFilter } from "../types/task.js";
import { TaskAuditEvent } from "../types/task-audit-event.js";

export const actorOf = (caller: TenantPrincipal) => `api-key:${caller.apiKeyId}`;

@Resolver(() => Task)
export class TaskResolver {
  @Query(() => Task, { nullable: true, description: "null when absent or another tenant's" })
  async task(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Task | null> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const record = await ctx.services.tasks.get(caller.tenantId, parseArg(idArgSchema, "id", id));
    return record === null ? null : toTask(record);
  }

  @Query(() => TaskConnection, { description: "newest first" })
  async tasks(
    @Arg("filter", () => TaskFilter, { nullable: true }) filter: TaskFilter | null | undefined,
    @Arg("first", () => Int, { nullable: true }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Ctx() ctx: GatewayContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<TaskConnection> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const parsedFilter = parseInput(taskFilterSchema, filter ?? {});
    // Read before the page, never after: a change between the page and a later read would be in neither.
    const eventCursor = selectsField(info, "eventCursor") ? await ctx.services.realtime.eventCursor() : null;
    return { ...(await listPage(ctx, caller, parsedFilter, { first, after })), eventCursor };
  }

  @Query(() => TaskConnection, { description: "DEAD tasks, the one that died last first (by completedAt, then id)" })
  async deadLetterTasks(
    @Arg("queue", () => String, { nullable: true }) queue: string | null | undefined,
    @Arg("first", () => Int, { nullable: true }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<TaskConnection> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const queueName = queue == null ? null : parseArg(queueNameArgSchema, "queue", queue);
    const page = parseInput(deadLetterPageSchema, { first, after });
    const result = await spendOnPage(ctx, (bodyBytes) => ctx.services.deadLetters.list(caller.tenantId, queueName, { ...page, bodyBytes }));
    return {
      nodes: result.nodes.map(toTask),
      pageInfo: { hasNextPage: result.hasNextPage, endCursor: result.endCursor },
      totalCount: result.totalCount,
    };
  }

  @FieldResolver(() => [Attempt])
  async attemptHistory(@Root() task: Task, @Ctx() ctx: GatewayContext): Promise<Attempt[]> {
    return (await ctx.loaders.attempts.load(task.id)).map(toAttempt);
  }

  @FieldResolver(() => [TaskAuditEvent], { description: "the task's audit trail, oldest first; `after` is an event id" })
  async events(
    @Root() task: Task,
    @Arg("first", () => Int, { nullable: true }) first: number | null | undefined,
    @Arg("after", () => String, { nullable: true }) after: string | null | undefined,
    @Ctx() ctx: GatewayContext,
  ): Promise<TaskAuditEvent[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const page = parseInput(auditPageSchema, { first, after });
    const events = await ctx.loaders.taskEvents(caller.tenantId, page.first, page.after ?? null).load(task.id);
    return events.map(toTaskAuditEvent);
  }

  @Mutation(() => Task)
  async submitTask(
    @Arg("input", () => SubmitTaskInput) input: SubmitTaskInput,
    @Ctx() ctx: GatewayContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    const spec = toSpecs([parseInput(submitTaskInputSchema, input)], allowPrivate(ctx), "input");
    const [task] = await submit(ctx, caller, spec, info);
    if (task === undefined) throw new Error("submitTasks returned no task for one spec");
    return task;
  }

  @Mutation(() => [Task], { description: "all or nothing; tasks come back in input order" })
  async submitTasks(
    @Arg("inputs", () => [SubmitTaskInput]) inputs: SubmitTaskInput[],
    @Ctx() ctx: GatewayContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<Task[]> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    const specs = toSpecs(parseInput(submitTasksInputSchema, inputs), allowPrivate(ctx), "inputs");
    return submit(ctx, caller, specs, info);
  }

  @Mutation(() => Task, { description: "terminal task: CONFLICT" })
  async cancelTask(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    return toTask(await ctx.services.tasks.cancel(caller.tenantId, parseArg(idArgSchema, "id", id), actorOf(caller)));
  }

  @Mutation(() => Task, {
    description:
      "DEAD -> QUEUED with a fresh attempt budget; a workflow's task: CONFLICT (its dependants were SKIPPED when it died and its workflow has ended: submit the workflow again)",
  })
  async redriveTask(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Task> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    return toTask(await ctx.services.tasks.redrive(caller.tenantId, parseArg(idArgSchema, "id", id), actorOf(caller)));
  }
}

async function listPage(
  ctx: GatewayContext,
  caller: TenantPrincipal,
  filter: Parameters<GatewayContext["services"]["tasks"]["list"]>[1],
  args: { first: number | null | undefined; after: string | null | undefined },
): Promise<TaskConnection> {
  const page = parseInput(taskPageSchema, args);
  const result = await spendOnPage(ctx, (bodyBytes) => ctx.services.tasks.list(caller.tenantId, filter, { ...page, bodyBytes }));
  return {
    nodes: result.nodes.map(toTask),
    pageInfo: { hasNextPage: result.hasNextPage, endCursor: result.endCursor },
    totalCount: result.totalCount,
  };
}

/**
 * A page's bodies come out of the answer's 4 MiB (core's answer-budget.ts),
 * so aliased pages share it rather than each hold 4 MiB (60 aliases of
 * tasks(first: 500) { nodes { payload } } fit the query cost). A page still
 * holds at least one task, so its cursor moves on.
 */
function spendOnPage(ctx: GatewayContext, read: (bodyBytes: number) => Promise<TaskPage>): Promise<TaskPage> {
  return ctx.loaders.answerBudget().spend(async (left) => {
    const page = await read(left.bytes);
    return { value: page, used: { bytes: page.bodyBytes, rows: 0 } };
  });
}

export function allowPrivate(ctx: GatewayContext): boolean {
  return ctx.services.config.allowPrivateTargets;
}

/**
 * Defaults decided once, against one clock reading for the whole batch.
 * callbackUrl gets the literal-address SSRF check here; the notifier
 * resolves and checks again before it connects. `path`: the argument the
 * inputs came in ("input", or the list "inputs"), or null for a stored
 * task's own submission (replayTask, which has no such argument).
 */
export function toSpecs(inputs: Parameters<typeof normalizeTaskSpec>[0][], allowPrivateTargets: boolean, path: string | null): TaskSpec[] {
  const now = Date.now();
  return inputs.map((input, i) => {
    if (input.callbackUrl != null) {
      const checked = checkOutboundUrl(input.callbackUrl, { allowPrivate: allowPrivateTargets });
      const field = path === null ? "callbackUrl" : path === "input" ? "input.callbackUrl" : `${path}.${i}.callbackUrl`;
      if (!checked.ok) throw new BadUserInputError(`${field} refused: ${checked.reason}`, [{ path: field, message: checked.reason }]);
    }
    return normalizeTaskSpec(input, now);
  });
}

/** Only these asked for: the submission reads no task back whole (services: submitRefs). */
const ID_ONLY = new Set(["id", "__typename"]);

async function submit(ctx: GatewayContext, caller: TenantPrincipal, specs: TaskSpec[], info: GraphQLResolveInfo): Promise<Task[]> {
  if (selectsOnly(info, ID_ONLY)) {
    // A Task holding its id alone: nothing else is asked for, so nothing else is read.
    return (await ctx.services.tasks.submitRefs(caller.tenantId, specs, actorOf(caller), ctx.traceParent)).map((ref) => ({ id: ref.id }) as Task);
  }
  // Tasks that specs' keys repeat are read back whole: their bodies come out of the answer's 4 MiB (core's
  // answer-budget.ts), past which they are withheld; new tasks' bodies are the request's own and spend none.
  return ctx.loaders.answerBudget().spend(async (left) => {
    const submitted = await ctx.services.tasks.submitWithin(caller.tenantId, specs, actorOf(caller), ctx.traceParent, left.bytes);
    return { value: submitted.tasks.map(toTask), used: { bytes: submitted.repeatBodyBytes, rows: 0 } };
  });
}
