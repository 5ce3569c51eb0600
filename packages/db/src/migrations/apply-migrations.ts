import { createHash, randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { errorChain, exitWithMessage } from "@tasklane/config";
import pg from "pg";
import { concurrentIndexMigration, type ConcurrentIndexMigration } from "./concurrent-index.js";
import { ensureDatabase } from "./ensure-database.js";

/** prisma/migrations at the repository root, wherever this file was compiled to. */
export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL("../../../../prisma/migrations", import.meta.url));

// Any constant works; it only has to be the same for every process of the platform.
const MIGRATION_LOCK_KEY = 7_314_522_901;
/** How often a process waiting for another's migrations asks for the lock again. */
const LOCK_POLL_MS = 250;

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
 *
 * A migration that is one CREATE/DROP INDEX CONCURRENTLY statement runs
 * outside a transaction (Postgres refuses it inside one), see
 * concurrent-index.ts and applyConcurrently.
 */
export async function applyMigrations(url: string, dir = DEFAULT_MIGRATIONS_DIR): Promise<AppliedMigration[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await acquireLock(client);
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
      const concurrent = concurrentIndexMigration(name, sql);
      if (concurrent) {
        await applyConcurrently(client, name, sql, concurrent);
        await recordApplied(client, name, checksum);
        newlyApplied.push({ name, checksum });
        continue;
      }
      await client.query("BEGIN");
      try {
        await client.query(sql);
        await recordApplied(client, name, checksum);
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

/**
 * Polls for the lock rather than blocking in pg_advisory_lock: a session
 * blocked there holds a snapshot, which CREATE INDEX CONCURRENTLY waits out
 * while it holds the lock that session waits for (a deadlock Postgres breaks
 * by failing one of them).
 */
async function acquireLock(client: pg.Client): Promise<void> {
  for (;;) {
    const { rows } = await client.query<{ locked: boolean }>("SELECT pg_try_advisory_lock($1) AS locked", [MIGRATION_LOCK_KEY]);
    if (rows[0]?.locked) return;
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
}

async function recordApplied(client: pg.Client, name: string, checksum: string): Promise<void> {
  await client.query(
    `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, started_at, applied_steps_count)
     VALUES ($1, $2, now(), $3, now(), 1)`,
    [randomUUID(), checksum, name],
  );
}

/** Whether `index` exists and is INVALID (a CREATE INDEX CONCURRENTLY that did not finish). */
async function isInvalidIndex(client: pg.Client, index: string): Promise<boolean> {
  const { rows } = await client.query<{ valid: boolean }>("SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)", [index]);
  return rows[0]?.valid === false;
}

/**
 * One CREATE/DROP INDEX CONCURRENTLY, outside a transaction. A build that
 * fails or is cut short (its process killed) leaves an INVALID index that
 * queries ignore but every write still maintains, and whose name blocks the
 * next attempt. So an INVALID index of that name is dropped before the build
 * and after a failed one: the migration stays unrecorded and the next start
 * builds it again from scratch.
 */
async function applyConcurrently(client: pg.Client, name: string, sql: string, migration: ConcurrentIndexMigration): Promise<void> {
  const dropInvalid = async () => {
    if (migration.kind === "create" && (await isInvalidIndex(client, migration.index))) {
      await client.query(`DROP INDEX CONCURRENTLY IF EXISTS ${migration.index}`);
      return true;
    }
    return false;
  };
  try {
    await dropInvalid();
  } catch (error) {
    throw new Error(`Migration ${name} not applied: could not drop the INVALID index ${migration.index} an earlier build left`, { cause: error });
  }
  try {
    await client.query(sql);
  } catch (error) {
    let cleanup: string;
    try {
      cleanup = (await dropInvalid()) ? `; the INVALID index ${migration.index} it left was dropped, and the next start builds it again` : "";
    } catch {
      cleanup = `; it left the INVALID index ${migration.index}, which could not be dropped: run DROP INDEX CONCURRENTLY ${migration.index}`;
    }
    throw new Error(`Migration ${name} failed${cleanup}`, { cause: error });
  }
}

/** The one call every app makes at start: database present, schema current. */
export async function prepareDatabase(url: string): Promise<AppliedMigration[]> {
  await ensureDatabase(url);
  return applyMigrations(url);
}

/**
 * prepareDatabase for a process about to start: when the database cannot be
 * reached or a migration fails, one line an operator can act on (where, and
 * why) and exit 1, rather than an unhandled rejection's stack.
 */
export async function prepareDatabaseOrExit(url: string, program: string): Promise<AppliedMigration[]> {
  try {
    return await prepareDatabase(url);
  } catch (error: unknown) {
    const target = new URL(url);
    const where = `${target.hostname || "localhost"}:${target.port || "5432"}${target.pathname}`;
    return exitWithMessage(program, `could not migrate ${where} (DATABASE_URL): ${errorChain(error)}`);
  }
}
