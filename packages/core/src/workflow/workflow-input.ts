/**
 * Workflow inputs (contract: WorkflowTaskInput, SubmitWorkflowInput). A
 * workflow task takes the same fields as a schedule's task template, checked
 * by the same rules, plus its key and the keys it depends on. The graph itself
 * (unique keys, known dependencies, no cycles) is checked by
 * validateWorkflowGraph, which needs the whole list at once.
 */
import { z } from "zod";
import { MAX_KEY_LENGTH, MAX_WORKFLOW_EDGES, MAX_WORKFLOW_TASKS, WORKFLOW_KEY_PATTERN } from "../limits.js";
import { nonBlankString } from "../schemas/common.js";
import { taskTemplateInputSchema } from "../schemas/schedule.js";

export const workflowKeySchema = z
  .string()
  .regex(WORKFLOW_KEY_PATTERN, { message: "must be 1-100 characters of letters, digits, '_', '.', ':', '-'" });

export const workflowTaskInputSchema = taskTemplateInputSchema.extend({
  key: workflowKeySchema,
  dependsOn: z.array(workflowKeySchema).max(MAX_WORKFLOW_TASKS).nullish(),
});
export type WorkflowTaskInput = z.output<typeof workflowTaskInputSchema>;

export const submitWorkflowInputSchema = z
  .object({
    name: nonBlankString(200),
    tasks: z.array(workflowTaskInputSchema).min(1).max(MAX_WORKFLOW_TASKS),
    idempotencyKey: z.string().min(1).max(MAX_KEY_LENGTH).nullish(),
  })
  .superRefine((input, ctx) => {
    const edges = input.tasks.reduce((n, t) => n + (t.dependsOn?.length ?? 0), 0);
    if (edges > MAX_WORKFLOW_EDGES) {
      ctx.addIssue({ code: "custom", path: ["tasks"], message: `at most ${MAX_WORKFLOW_EDGES} dependencies in all, got ${edges}` });
    }
  });
export type SubmitWorkflowInput = z.output<typeof submitWorkflowInputSchema>;
