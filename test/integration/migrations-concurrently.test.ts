/**
 * The migration runner and CREATE/DROP INDEX CONCURRENTLY (docs/operations.md,
 * Upgrades and migrations), on a scratch database with scratch migrations
 * folders: such a migration runs outside a transaction under the runner's
 * lock and is recorded only once it succeeded; a failed or cut-short build's
 * INVALID index is dropped so the next start builds it again; CONCURRENTLY
 * mixed with other statements is refused with the reason.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyMigrations } from "@tasklane/db/migrations/apply-migrations";
import { ensureDatabase } from "@tasklane/db/migrations/ensure-database";
import { databaseUrl, dropDatabase } from "../helpers/test-database.js";

const databaseName = `tl_test_migconc_${randomBytes(4).toString("hex")}`;
const url = databaseUrl(databaseName);
let db: pg.Client;
let root: string;

/** A migrations folder holding `migrations` (name → SQL), as prisma/migrations lays them out. */
async function folder(migrations: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(path.join(root, "m-"));
  for (const [name, sql] of Object.entries(migrations)) {
    await mkdir(path.join(dir, name));
    await writeFile(path.join(dir, name, "migration.sql"), sql);
  }
  return dir;
}

const recorded = async () =>
  (await db.query<{ migration_name: string }>(`SELECT migration_name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL ORDER BY 1`)).rows.map((r) => r.migration_name);
const indexState = async (name: string) =>
  (await db.query<{ valid: boolean }>("SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass($1)", [name])).rows[0]?.valid;

const TABLE = { "001_table": "CREATE TABLE t (x int, y int);\nINSERT INTO t VALUES (1, 1), (1, 2);\n" };

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "tl-migrations-"));
  await ensureDatabase(url);
  db = new pg.Client({ connectionString: url });
  await db.connect();
});

afterAll(async () => {
  await db?.end();
  await dropDatabase(databaseName);
  if (root) await rm(root, { recursive: true, force: true });
});

describe("CREATE INDEX CONCURRENTLY in a migration of its own", () => {
  it("is applied outside a transaction and recorded, by one of several processes starting at once", async () => {
    const dir = await folder({ ...TABLE, "002_index": "-- big table: no write lock\nCREATE INDEX CONCURRENTLY t_x_idx ON t (x);\n" });
    const runs = await Promise.all([applyMigrations(url, dir), applyMigrations(url, dir), applyMigrations(url, dir)]);
    expect(runs.map((r) => r.length).sort()).toEqual([0, 0, 2]);
    expect(await recorded()).toEqual(["001_table", "002_index"]);
    expect(await indexState("t_x_idx")).toBe(true);
    expect(await applyMigrations(url, dir)).toEqual([]);
  });

  it("a failed build is not recorded, its INVALID index is dropped, and the next start builds it", async () => {
    const unique = { "003_unique": "CREATE UNIQUE INDEX CONCURRENTLY t_x_key ON t (x);" };
    const dir = await folder({ ...TABLE, "002_index": "-- big table: no write lock\nCREATE INDEX CONCURRENTLY t_x_idx ON t (x);\n", ...unique });
    const failure = await applyMigrations(url, dir).then(() => null, (error: unknown) => error as Error);
    expect(failure?.message).toBe("Migration 003_unique failed; the INVALID index t_x_key it left was dropped, and the next start builds it again");
    expect((failure?.cause as Error).message).toMatch(/could not create unique index "t_x_key"/);
    expect(await indexState("t_x_key")).toBeUndefined();
    expect(await recorded()).toEqual(["001_table", "002_index"]);

    await db.query("DELETE FROM t WHERE y = 2");
    expect((await applyMigrations(url, dir)).map((m) => m.name)).toEqual(["003_unique"]);
    expect(await indexState("t_x_key")).toBe(true);
  });

  it("an INVALID index left by a build cut short is dropped and built again", async () => {
    await db.query("INSERT INTO t VALUES (3, 5), (4, 5)");
    // A build that dies midway (here: on the duplicates) leaves its index INVALID, as a killed process would.
    await db.query("CREATE UNIQUE INDEX CONCURRENTLY t_y_key ON t (y)").catch(() => undefined);
    expect(await indexState("t_y_key")).toBe(false);
    await db.query("DELETE FROM t WHERE x = 4");
    const dir = await folder({ "004_y": "CREATE UNIQUE INDEX CONCURRENTLY t_y_key ON t (y);" });
    expect((await applyMigrations(url, dir)).map((m) => m.name)).toEqual(["004_y"]);
    expect(await indexState("t_y_key")).toBe(true);
  });

  it("DROP INDEX CONCURRENTLY in a migration of its own is applied too", async () => {
    const dir = await folder({ "005_drop": "DROP INDEX CONCURRENTLY IF EXISTS t_x_idx;" });
    expect((await applyMigrations(url, dir)).map((m) => m.name)).toEqual(["005_drop"]);
    expect(await indexState("t_x_idx")).toBeUndefined();
  });

  it("refuses CONCURRENTLY mixed with other statements, applying nothing of it", async () => {
    const dir = await folder({ "006_mixed": "CREATE INDEX CONCURRENTLY t_y_idx ON t (y);\nALTER TABLE t ADD COLUMN z int;\n" });
    await expect(applyMigrations(url, dir)).rejects.toThrow(
      /^Migration 006_mixed: it mixes CONCURRENTLY with other statements\. CREATE INDEX CONCURRENTLY and DROP INDEX CONCURRENTLY cannot run in a transaction/,
    );
    expect(await indexState("t_y_idx")).toBeUndefined();
    expect((await db.query("SELECT 1 FROM information_schema.columns WHERE table_name = 't' AND column_name = 'z'")).rowCount).toBe(0);
    expect(await recorded()).not.toContain("006_mixed");
  });
});
