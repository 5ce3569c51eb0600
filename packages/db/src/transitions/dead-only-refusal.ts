import { ConflictError, NotFoundError } from "@tasklane/core";
import type pg from "pg";

/**
 * Why a transition that applies to DEAD tasks only (redrive, discard) matched
 * no row: the task is not the caller's (NOT_FOUND, the same answer as a
 * missing id) or it is not DEAD (CONFLICT, naming its status).
 */
export async function refuseDeadOnly(client: pg.PoolClient, tenantId: string, id: string, verb: string): Promise<never> {
  const res = await client.query<{ status: string }>("SELECT status FROM tasks WHERE id = $1 AND tenant_id = $2", [id, tenantId]);
  const status = res.rows[0]?.status;
  if (status === undefined) throw new NotFoundError("Task", id);
  throw new ConflictError(`Only DEAD tasks can be ${verb}; this one is ${status}`);
}
