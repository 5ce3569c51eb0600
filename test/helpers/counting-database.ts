import { createDatabase, type Database } from "@tasklane/db";
import type pg from "pg";

/**
 * A one-connection Database on `url` that counts the statements sent on it: for tests that bound how
 * many round trips an operation takes (deciding occurrence by occurrence took thousands). Close its db.
 */
export function countingDatabase(url: string): { db: Database; statements: () => number } {
  const db = createDatabase({ url, max: 1, applicationName: "tasklane-test-counting" });
  let count = 0;
  db.pool.on("connect", (client: pg.PoolClient) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    client.query = ((...args: unknown[]) => {
      count += 1;
      return query(...args);
    }) as typeof client.query;
  });
  return { db, statements: () => count };
}
