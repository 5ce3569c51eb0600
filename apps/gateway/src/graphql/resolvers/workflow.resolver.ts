/** Workflows (DAGs of tasks) — placeholder until the workflow issue replaces it. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from "type-graphql";
import { Permission } from "../../auth/scopes.js";
import type { GatewayContext } from "../context.js";
import { SubmitWorkflowInput, Workflow } from "../types/workflow.js";
import { notAvailableYet } from "./not-available.js";

@Resolver(() => Workflow)
export class WorkflowResolver {
  @Query(() => Workflow, { nullable: true })
  workflow(@Arg("id", () => ID) _id: string, @Ctx() ctx: GatewayContext): Promise<Workflow | null> {
    return notAvailableYet(ctx, "workflow", Permission.READ);
  }

  @Query(() => [Workflow])
  workflows(
    @Arg("first", () => Int, { nullable: true }) _first: number | null,
    @Arg("after", () => String, { nullable: true }) _after: string | null,
    @Ctx() ctx: GatewayContext,
  ): Promise<Workflow[]> {
    return notAvailableYet(ctx, "workflows", Permission.READ);
  }

  @Mutation(() => Workflow, { description: "cycle or unknown key: BAD_USER_INPUT" })
  submitWorkflow(@Arg("input", () => SubmitWorkflowInput) _input: SubmitWorkflowInput, @Ctx() ctx: GatewayContext): Promise<Workflow> {
    return notAvailableYet(ctx, "submitWorkflow", Permission.SUBMIT);
  }

  @Mutation(() => Workflow)
  cancelWorkflow(@Arg("id", () => ID) _id: string, @Ctx() ctx: GatewayContext): Promise<Workflow> {
    return notAvailableYet(ctx, "cancelWorkflow", Permission.SUBMIT);
  }
}
