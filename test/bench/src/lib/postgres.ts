import { randomBytes } from "node:crypto";
import pg from "pg";
import { onCleanup } from "./cleanup.js";

/** The server the bench creates its databases on (trust auth, local). */
export const PG_ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/** For diagnosis: BENCH_KEEP_DATABASES=1 leaves every database in place (drop them by hand afterwards). */
const KEEP = process.env.BENCH_KEEP_DATABASES === "1";

export interface BenchDatabase {
  readonly name: string;
  readonly url: string;
  /** A small pool for the harness's own queries (counts, ids). */
  readonly pool: pg.Pool;
  drop(): Promise<void>;
}

/** A fresh, empty database `tl_bench_<random>`, dropped by drop() or at exit. */
export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `tl_bench_${randomBytes(5).toString("hex")}`;
  await adminQuery(`CREATE DATABASE "${name}"`);
  const url = new URL(PG_ADMIN_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4, application_name: "tasklane-bench" });
  pool.on("error", () => undefined);
  const drop = onCleanup(`database ${name}`, async () => {
    await pool.end().catch(() => undefined);
    if (KEEP) process.stderr.write(`[bench] kept database ${name} (BENCH_KEEP_DATABASES=1)\n`);
    else await adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  });
  return { name, url: url.toString(), pool, drop };
}

export async function adminQuery(sql: string): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL });
  await client.connect();
  try {
    return await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function postgresVersion(): Promise<string> {
  const res = await adminQuery("SHOW server_version");
  return String(res.rows[0]?.server_version ?? "unknown");
}
