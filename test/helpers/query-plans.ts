import type { Queryable } from "@tasklane/db";
import type pg from "pg";

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

/** The nodes of `EXPLAIN (ANALYZE, FORMAT JSON) <statement>` (which runs it), or without ANALYZE (which only plans it). */
export async function explainNodes(q: Queryable, statement: string, values: unknown[] = [], { analyze = true } = {}): Promise<PlanNode[]> {
  const explained = await q.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(`EXPLAIN (${analyze ? "ANALYZE, " : ""}FORMAT JSON) ${statement}`, values);
  return planNodes(explained.rows[0]!["QUERY PLAN"][0].Plan);
}

/** Stands in for a pool: runs each query on `pool` and keeps its text and values, to explain them afterwards. */
export function recordingPool(pool: Queryable): { query: (text: string, values: unknown[]) => Promise<unknown>; statements: { text: string; values: unknown[] }[] } {
  const statements: { text: string; values: unknown[] }[] = [];
  return {
    statements,
    query: (text, values) => {
      statements.push({ text, values });
      return pool.query(text, values);
    },
  };
}

/** A statement sent through a transaction of recordingDatabase, with the SET LOCAL settings it ran under. */
export interface RecordedStatement {
  text: string;
  values: unknown[];
  settings: string[];
}

/**
 * Stands in for a Database whose work runs in transactions (pool.connect):
 * each statement is run on `pool` and kept with the transaction's SET LOCAL
 * settings before it, to explain it afterwards under the same (explainRecorded).
 */
export function recordingDatabase(pool: pg.Pool): { db: { pool: pg.Pool }; statements: RecordedStatement[] } {
  const statements: RecordedStatement[] = [];
  const db = {
    pool: {
      query: (text: string, values?: unknown[]) => pool.query(text, values),
      async connect() {
        const client = await pool.connect();
        const settings: string[] = [];
        return {
          query(text: string, values?: unknown[]) {
            if (/^SET LOCAL/.test(text)) settings.push(text);
            else statements.push({ text, values: values ?? [], settings: [...settings] });
            return client.query(text, values);
          },
          release: () => client.release(),
        };
      },
    },
  } as unknown as { pool: pg.Pool };
  return { db, statements };
}

/** The recorded statement's plan under its settings, in a transaction rolled back (with ANALYZE it runs). */
export async function explainRecorded(pool: pg.Pool, { text, values, settings }: RecordedStatement, options: { analyze?: boolean } = {}): Promise<PlanNode[]> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    for (const setting of settings) await client.query(setting);
    return await explainNodes(client, text, values, options);
  } finally {
    await client.query("ROLLBACK");
    client.release();
  }
}
