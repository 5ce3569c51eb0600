import type { Database } from "../database.js";

/** Rows filled per statement: each holds its rows' locks for a few milliseconds. */
export const ORIGIN_FILL_BATCH = 1_000;

/** One batch of fillDeliveryOrigins: how many rows it filled and where the next one starts. */
export interface OriginFillBatch {
  filled: number;
  /** The last id looked at: the next batch's `afterId`. */
  lastId: string | null;
}

/**
 * Fills the origin of up to `batch` PENDING deliveries written before the
 * column existed (migration webhook_deliveries_origin), ids after `afterId`
 * in id order: the claim passes over a row without an origin, and every row
 * written since has one (the table's triggers set it from the URL on insert,
 * and on an update that finds it null). A pass from "" until a batch comes
 * back short fills them all; rows locked by a writer at that moment are
 * passed over (SKIP LOCKED) and get theirs from that writer's update.
 */
export async function fillDeliveryOrigins(db: Database, afterId: string, batch = ORIGIN_FILL_BATCH): Promise<OriginFillBatch> {
  // max(id) from Postgres, not a sort here: the next batch's id > $1 compares in the column's collation.
  const res = await db.pool.query<{ filled: number; last_id: string | null }>(
    `WITH batch AS (
       SELECT id FROM webhook_deliveries WHERE id > $1 AND status = 'PENDING' AND origin IS NULL
       ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
     ),
     filled AS (
       UPDATE webhook_deliveries d SET origin = tasklane_url_origin(d.url) FROM batch b WHERE d.id = b.id RETURNING d.id
     )
     SELECT count(*)::int AS filled, max(id) AS last_id FROM filled`,
    [afterId, batch],
  );
  const row = res.rows[0];
  return { filled: row?.filled ?? 0, lastId: row?.last_id ?? null };
}
