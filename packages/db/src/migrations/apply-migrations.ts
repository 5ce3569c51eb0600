import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { ensureDatabase } from "./ensure-database.js";

/** prisma/migrations at the repository root, wherever this file was compiled to. */
export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL("../../../../prisma/migrations", import.meta.url));

// Any constant works; it only has to be the same for every process of the platform.
const MIGRATION_LOCK_KEY = 7_314_522_901;

export interface AppliedMigration {
  name: string;
  checksum: string;
}

/**
 * Applies prisma/migrations/<name>/migration.sql in order and records each in
 * `_prisma_migrations` exactly as `prisma migrate deploy` does (sha256
 * checksum, finished_at, applied_steps_count), so the CLI accepts the database
 * afterwards. The native schema engine is not available on these machines.
 * An advisory lock lets any number of processes call this at once.
 */
export async function applyMigrations(url: string, dir = DEFAULT_MIGRATIONS_DIR): Promise<AppliedMigration[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
        "id" VARCHAR(36) PRIMARY KEY NOT NULL,
        "checksum" VARCHAR(64) NOT NULL,
        "finished_at" TIMESTAMPTZ,
        "migration_name" VARCHAR(255) NOT NULL,
        "logs" TEXT,
        "rolled_back_at" TIMESTAMPTZ,
        "started_at" TIMESTAMPTZ NOT NULL DEFAULT now(),
        "applied_steps_count" INTEGER NOT NULL DEFAULT 0
      )`);
    const done = await client.query<{ migration_name: string; checksum: string }>(
      `SELECT migration_name, checksum FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
    );
    const applied = new Map(done.rows.map((r) => [r.migration_name, r.checksum]));
    const names = (await readdir(dir, { withFileTypes: true }))
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    const newlyApplied: AppliedMigration[] = [];
    for (const name of names) {
      const sql = await readFile(path.join(dir, name, "migration.sql"), "utf8");
      const checksum = createHash("sha256").update(sql).digest("hex");
      const previous = applied.get(name);
      if (previous !== undefined) {
        if (previous !== checksum) throw new Error(`Migration ${name} was changed after it was applied`);
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, now(), 1)`,
          [randomUUID(), checksum, name],
        );
        await client.query("COMMIT");
      } catch (error) {
        await client.query("ROLLBACK");
        throw new Error(`Migration ${name} failed`, { cause: error });
      }
      newlyApplied.push({ name, checksum });
    }
    return newlyApplied;
  } finally {
    await client.query("SELECT pg_advisory_unlock_all()").catch(() => undefined);
    await client.end();
  }
}

/** The one call every app makes at start: database present, schema current. */
export async function prepareDatabase(url: string): Promise<AppliedMigration[]> {
  await ensureDatabase(url);
  return applyMigrations(url);
}
