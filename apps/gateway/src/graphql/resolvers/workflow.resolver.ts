/**
 * Workflows (DAGs of tasks): submit, cancel, read. The input is parsed with
 * core's schema and its graph checked (unique keys, known dependencies, no
 * cycles) before anything is written; storage is behind services/workflow-service.ts.
 */
import { normalizeWorkflowSpec, parseArg, parseInput, submitWorkflowInputSchema, validateWorkflowGraph, workflowPageSchema } from "@tasklane/core";
import type { WorkflowRecord } from "@tasklane/db";
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from "type-graphql";
import type { TenantPrincipal } from "../../auth/principal.js";
import { requireTenant } from "../../auth/guards.js";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { idArgSchema } from "../input-schemas.js";
import { toTask } from "../mappers.js";
import { SubmitWorkflowInput, Workflow, WorkflowTask } from "../types/workflow.js";

const actorOf = (caller: TenantPrincipal) => `api-key:${caller.apiKeyId}`;

export function toWorkflow(r: WorkflowRecord): Workflow {
  return { id: r.id, name: r.name, status: r.status, createdAt: r.createdAt, completedAt: r.completedAt };
}

@Resolver(() => Workflow)
export class WorkflowResolver {
  @Query(() => Workflow, { nullable: true, description: "null when absent or another tenant's" })
  async workflow(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Workflow | null> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const record = await ctx.services.workflows.get(caller.tenantId, parseArg(idArgSchema, "id", id));
    return record === null ? null : toWorkflow(record);
  }

  @Query(() => [Workflow], { description: "newest first; after: the id of the last workflow of the previous page" })
  async workflows(
    @Arg("first", () => Int, { nullable: true }) first: number | null,
    @Arg("after", () => String, { nullable: true }) after: string | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<Workflow[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const page = parseInput(workflowPageSchema, { first, after });
    return (await ctx.services.workflows.list(caller.tenantId, page)).map(toWorkflow);
  }

  @FieldResolver(() => Int, { description: "how many tasks `tasks` holds, without reading them" })
  async taskCount(@Root() workflow: Workflow, @Ctx() ctx: GatewayContext): Promise<number> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    return ctx.loaders.workflowTaskCounts.load({ tenantId: caller.tenantId, workflowId: workflow.id });
  }

  @FieldResolver(() => [WorkflowTask], {
    description:
      "in submission order. One answer reads at most 10,000 tasks of workflows and schedules' runs (more: BAD_USER_INPUT) and 4 MiB of their payloads and results; past that, in id order, a task's payload and result answer null with a BAD_USER_INPUT error: read it with task(id)",
  })
  async tasks(@Root() workflow: Workflow, @Ctx() ctx: GatewayContext): Promise<WorkflowTask[]> {
    const caller = requireTenant(ctx.principal, Permission.READ);
    const tasks = await ctx.loaders.workflowTasks.load({ tenantId: caller.tenantId, workflowId: workflow.id });
    return tasks.map((t) => ({ key: t.key, dependsOn: t.dependsOn, task: toTask(t.task) }));
  }

  @Mutation(() => Workflow, { description: "cycle or unknown key: BAD_USER_INPUT" })
  async submitWorkflow(@Arg("input", () => SubmitWorkflowInput) input: SubmitWorkflowInput, @Ctx() ctx: GatewayContext): Promise<Workflow> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    const parsed = parseInput(submitWorkflowInputSchema, input);
    validateWorkflowGraph(parsed.tasks);
    const { workflow, tasks, created } = await ctx.services.workflows.submit(caller.tenantId, normalizeWorkflowSpec(parsed, Date.now()), actorOf(caller), ctx.traceParent);
    if (created) ctx.services.metrics.tasksSubmitted.inc(tasks.length);
    return toWorkflow(workflow);
  }

  @Mutation(() => Workflow, { description: "cancels every unfinished task; a finished workflow: CONFLICT" })
  async cancelWorkflow(@Arg("id", () => ID) id: string, @Ctx() ctx: GatewayContext): Promise<Workflow> {
    const caller = requireTenant(ctx.principal, Permission.SUBMIT);
    return toWorkflow(await ctx.services.workflows.cancel(caller.tenantId, parseArg(idArgSchema, "id", id), actorOf(caller)));
  }
}
