import { createHash, randomBytes } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { createDatabase, type Database } from "@tasklane/db";
import { applyMigrations, DEFAULT_MIGRATIONS_DIR } from "@tasklane/db/migrations/apply-migrations";

/** The test server's maintenance database: where databases are created, looked up and dropped. */
export const TEST_ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/** The URL of database `name` on the admin URL's server. */
export function databaseUrl(name: string, adminUrl = TEST_ADMIN_URL): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(adminUrl: string, fn: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

export async function databaseExists(name: string, adminUrl = TEST_ADMIN_URL): Promise<boolean> {
  return withAdmin(adminUrl, async (admin) => (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1);
}

/** Drops database `name` (our own names only: it is quoted, not escaped), closing its sessions. */
export async function dropDatabase(name: string, adminUrl = TEST_ADMIN_URL): Promise<void> {
  await withAdmin(adminUrl, (admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}

/** Any constant: serialises building the template across test workers and projects. */
const TEMPLATE_LOCK_KEY = 7_314_522_902;
const TEMPLATE_PREFIX = "tl_template_";
const templates = new Map<string, Promise<string>>();
/** Templates kept on a server, the newest first (by oid): this run's and the few before it. */
const TEMPLATES_KEPT = 4;

/** A hash of every migration's name and text: a changed or added migration names a new template. */
async function migrationsHash(dir = DEFAULT_MIGRATIONS_DIR): Promise<string> {
  const hash = createHash("sha256");
  const names = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  for (const name of names) hash.update(name).update("\0").update(await readFile(path.join(dir, name, "migration.sql"))).update("\0");
  return hash.digest("hex").slice(0, 16);
}

/**
 * The name of a database holding every migration, built once per server and
 * migration set: copying it (CREATE DATABASE … TEMPLATE, ~35 ms) is what gives
 * each test file its fresh database, instead of applying the migrations again
 * (~220 ms a file on a busy 2-core machine). It is built under another name and
 * renamed when whole, and takes no connections, so a copy never finds it half
 * made or in use. Only templates beyond the few newest are dropped: a run
 * that started with an older migration set (another checkout, a migration
 * added meanwhile) may still be copying its own.
 */
function migratedTemplate(adminUrl: string): Promise<string> {
  let template = templates.get(adminUrl);
  if (!template) {
    template = buildTemplate(adminUrl);
    templates.set(adminUrl, template);
    template.catch(() => templates.delete(adminUrl));
  }
  return template;
}

async function buildTemplate(adminUrl: string): Promise<string> {
  const name = `${TEMPLATE_PREFIX}${await migrationsHash()}`;
  return withAdmin(adminUrl, async (admin) => {
    const exists = async () => (await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])).rowCount === 1;
    if (await exists()) return name;
    await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK_KEY]);
    try {
      if (await exists()) return name;
      const building = `${name}_build`;
      await admin.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${building}"`);
      await applyMigrations(databaseUrl(building, adminUrl));
      await admin.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`);
      await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      const stale = await admin.query<{ datname: string }>(
        "SELECT datname FROM pg_database WHERE datname LIKE $1 AND datname <> $2 ORDER BY oid DESC OFFSET $3",
        [`${TEMPLATE_PREFIX}%`, name, TEMPLATES_KEPT - 1],
      );
      for (const { datname } of stale.rows) {
        await admin.query(`ALTER DATABASE "${datname}" WITH IS_TEMPLATE false`);
        await admin.query(`DROP DATABASE "${datname}" WITH (FORCE)`);
      }
      return name;
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK_KEY]);
    }
  });
}

/**
 * A fresh, migrated database for one test file (a copy of the migrated
 * template); dropped afterwards. `adminUrl` names another server (the chaos
 * suite's own PostgreSQL).
 */
export async function createTestDatabase(label = "t", adminUrl = TEST_ADMIN_URL): Promise<TestDatabase> {
  const name = `tl_test_${label}_${randomBytes(4).toString("hex")}`;
  const url = databaseUrl(name, adminUrl);
  const copy = async () => {
    const template = await migratedTemplate(adminUrl);
    await withAdmin(adminUrl, (admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
  };
  try {
    await copy();
  } catch (error) {
    // Its template was dropped by a run with newer migrations (3D000): build it again, once.
    if (!(error instanceof pg.DatabaseError && error.code === "3D000")) throw error;
    templates.delete(adminUrl);
    await copy();
  }
  const db = createDatabase({ url, max: 5, applicationName: "tasklane-test" });
  return {
    url,
    db,
    async drop() {
      await db.close();
      await dropDatabase(name, adminUrl);
    },
  };
}

/** A Redis key prefix no other test file uses. */
export const uniqueRedisPrefix = (label = "t") => `tt${label}${randomBytes(3).toString("hex")}`;
