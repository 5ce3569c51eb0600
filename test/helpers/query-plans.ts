/** One node of `EXPLAIN (FORMAT JSON)` output, with the fields the plan tests read (the Actual ones need ANALYZE). */
export interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Plan Rows"?: number;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Rows Removed by Filter"?: number;
  "Rows Removed by Index Recheck"?: number;
  Plans?: PlanNode[];
}

/** The node and every node below it. */
export const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

/**
 * Rows the plan's scans of `relation` looked at: those they passed on and those
 * their filters and rechecks dropped, over every loop (the rows a ModifyTable
 * node writes are not reads).
 */
export const rowsRead = (plan: PlanNode[], relation: string): number =>
  plan
    .filter((n) => n["Relation Name"] === relation && n["Node Type"] !== "ModifyTable")
    .reduce((sum, n) => sum + ((n["Actual Rows"] ?? 0) + (n["Rows Removed by Filter"] ?? 0) + (n["Rows Removed by Index Recheck"] ?? 0)) * (n["Actual Loops"] ?? 1), 0);
