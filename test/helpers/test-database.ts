import { randomBytes } from "node:crypto";
import pg from "pg";
import { createDatabase, prepareDatabase, type Database } from "@tasklane/db";

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

/**
 * A fresh, migrated database for one test file; dropped afterwards.
 * `adminUrl` names another server (the chaos suite's own PostgreSQL).
 */
export async function createTestDatabase(label = "t", adminUrl = TEST_ADMIN_URL): Promise<TestDatabase> {
  const name = `tl_test_${label}_${randomBytes(4).toString("hex")}`;
  const url = databaseUrl(name, adminUrl);
  await prepareDatabase(url);
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
