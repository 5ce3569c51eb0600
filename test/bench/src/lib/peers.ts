import { BULLMQ_SETTINGS, BullMqSystem } from "../peers/bullmq.js";
import { GRAPHILE_BATCHED_SETTINGS, GRAPHILE_SETTINGS, GraphileSystem } from "../peers/graphile.js";
import { PGBOSS_SETTINGS, PgBossSystem } from "../peers/pgboss.js";
import { TASKLANE_SETTINGS } from "./tasklane.js";
import { createBenchDatabase } from "./postgres.js";
import type { SystemName } from "./cli.js";
import type { BenchSystem } from "./system.js";

/** The peers `--systems` names (cli.ts), that is every system but Tasklane's two modes. */
export type PeerKind = Exclude<SystemName, "push" | "pull">;

/** How each system is configured, for the report. */
export const SETTINGS: Record<string, string> = {
  Tasklane: TASKLANE_SETTINGS,
  BullMQ: BULLMQ_SETTINGS,
  "graphile-worker": GRAPHILE_SETTINGS,
  "graphile-worker (batched)": GRAPHILE_BATCHED_SETTINGS,
  "pg-boss": PGBOSS_SETTINGS,
};

/**
 * A peer on fresh storage (its own database; or a flushed Redis DB 15 for
 * BullMQ), closed and dropped after `fn`.
 */
export async function withPeer<T>(kind: PeerKind, fn: (system: BenchSystem) => Promise<T>): Promise<T> {
  if (kind === "bullmq") {
    const system = await BullMqSystem.create();
    try {
      return await fn(system);
    } finally {
      await system.close();
    }
  }
  const db = await createBenchDatabase();
  try {
    const system = kind === "pg-boss" ? await PgBossSystem.create(db) : await GraphileSystem.create(db, kind === "graphile-batched");
    try {
      return await fn(system);
    } finally {
      await system.close();
    }
  } finally {
    await db.drop();
  }
}
