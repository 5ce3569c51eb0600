import { randomBytes } from "node:crypto";
import pg from "pg";
import { createDatabase, prepareDatabase, type Database } from "@tasklane/db";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/**
 * A fresh, migrated database for one test file; dropped afterwards.
 * `adminUrl` names another server (the chaos suite's own PostgreSQL).
 */
export async function createTestDatabase(label = "t", adminUrl = ADMIN_URL): Promise<TestDatabase> {
  const name = `tl_test_${label}_${randomBytes(4).toString("hex")}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await prepareDatabase(url.toString());
  const db = createDatabase({ url: url.toString(), max: 5, applicationName: "tasklane-test" });
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.close();
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

/** A Redis key prefix no other test file uses. */
export const uniqueRedisPrefix = (label = "t") => `tt${label}${randomBytes(3).toString("hex")}`;
