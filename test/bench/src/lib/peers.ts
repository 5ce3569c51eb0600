import { BullMqSystem } from "../peers/bullmq.js";
import { GraphileSystem } from "../peers/graphile.js";
import { PgBossSystem } from "../peers/pgboss.js";
import { createBenchDatabase } from "./postgres.js";
import type { BenchSystem } from "./system.js";

export type PeerKind = "bullmq" | "graphile" | "graphile-batched" | "pg-boss";

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
