import { randomBytes } from "node:crypto";
import pg from "pg";
import { createDatabase, prepareDatabase, type Database } from "@tasklane/db";

export interface ChaosDatabase {
  url: string;
  db: Database;
  drop(): Promise<void>;
}

/** A fresh, migrated database on the given server (the shared one, or the suite's own); dropped afterwards. */
export async function createChaosDatabase(adminUrl: string, label: string): Promise<ChaosDatabase> {
  const name = `tl_chaos_${label}_${randomBytes(4).toString("hex")}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  await prepareDatabase(url.toString());
  const db = createDatabase({ url: url.toString(), max: 4, applicationName: "tasklane-chaos" });
  return {
    url: url.toString(),
    db,
    async drop() {
      await db.close().catch(() => undefined);
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
