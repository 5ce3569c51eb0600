/**
 * Counter tables kept by the task counter triggers (tenant_counters,
 * queue_counters): a count is the sum of its rows, one per database session
 * that changed it (slot = its backend pid) plus a base row (slot 0), so
 * concurrent transitions never wait on one counter row.
 */
import type { Queryable } from "../database.js";

export interface SessionCounterTable {
  table: string;
  /** The count's key, slot aside. */
  key: readonly string[];
  /** The counted column. */
  value: string;
  /** Columns the key determines, copied onto the base row. */
  carried?: readonly string[];
}

/**
 * The statement that folds per-session rows into each count's base row, so a
 * table stays about counts × active sessions as connections come and go. Rows
 * a running transaction holds are skipped (SKIP LOCKED): nobody waits, and a
 * session whose row was folded simply starts a new one. Base rows are written
 * in key order, so concurrent folds cannot deadlock. Sums are unchanged. $1 is
 * the most rows one statement folds; it answers how many it folded (n).
 */
export function foldSessionRowsSql({ table, key, value, carried = [] }: SessionCounterTable): string {
  const keys = key.join(", ");
  return `WITH picked AS (
       SELECT ${keys}, slot FROM ${table} WHERE slot <> 0
       ORDER BY ${keys}, slot LIMIT $1 FOR UPDATE SKIP LOCKED
     ),
     gone AS (
       DELETE FROM ${table} c USING picked p
       WHERE ${key.map((k) => `c.${k} = p.${k}`).join(" AND ")} AND c.slot = p.slot
       RETURNING ${[...key, ...carried, value].map((c) => `c.${c}`).join(", ")}
     ),
     base AS (
       INSERT INTO ${table} AS b (${[...key, "slot", ...carried, value].join(", ")})
       SELECT ${[...key, "0", ...carried.map((c) => `min(${c})`), `sum(${value})`].join(", ")} FROM gone GROUP BY ${keys} ORDER BY ${keys}
       ON CONFLICT (${keys}, slot) DO UPDATE SET ${value} = b.${value} + EXCLUDED.${value}
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM gone)::int AS n, (SELECT count(*) FROM base) AS _`;
}

/** Runs a fold statement from foldSessionRowsSql: the number of session rows folded. */
export async function foldSessionRows(db: Queryable, sql: string, limit: number): Promise<number> {
  const res = await db.query<{ n: number }>(sql, [limit]);
  return res.rows[0]?.n ?? 0;
}
