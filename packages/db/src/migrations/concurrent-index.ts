/**
 * Migrations that build or drop an index CONCURRENTLY. Postgres refuses those
 * inside a transaction block, and the runner wraps every other migration in
 * one, so such a migration must be that one statement and nothing else: it is
 * then run on its own (still under the runner's advisory lock) and recorded
 * only once it has succeeded.
 */

/** A migration of one `CREATE [UNIQUE] INDEX CONCURRENTLY` or `DROP INDEX CONCURRENTLY` statement. */
export interface ConcurrentIndexMigration {
  kind: "create" | "drop";
  /** The index as the statement names it (quoted or not), for to_regclass. */
  index: string;
}

/** SQL without its comments, for looking at its shape (string literals are left as they are). */
function withoutComments(sql: string): string {
  return sql.replace(/\/\*[\s\S]*?\*\//g, " ").replace(/--[^\n]*/g, " ");
}

const IDENTIFIER = String.raw`(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)`;
const CREATE = new RegExp(
  String.raw`^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?(${IDENTIFIER}(?:\.${IDENTIFIER})?)\s+ON\s`,
  "i",
);
const DROP = new RegExp(String.raw`^DROP\s+INDEX\s+CONCURRENTLY\s+(?:IF\s+EXISTS\s+)?(${IDENTIFIER}(?:\.${IDENTIFIER})?)\s*(?:CASCADE|RESTRICT)?\s*$`, "i");

/**
 * Whether `sql` is a CONCURRENTLY index migration: undefined when it does not
 * use CONCURRENTLY at all (the runner applies it in a transaction as usual);
 * throws when it does but is not exactly one such statement with a named index.
 */
export function concurrentIndexMigration(name: string, sql: string): ConcurrentIndexMigration | undefined {
  const text = withoutComments(sql).trim();
  if (!/\bCONCURRENTLY\b/i.test(text)) return undefined;
  const refuse = (why: string): never => {
    throw new Error(
      `Migration ${name}: ${why}. CREATE INDEX CONCURRENTLY and DROP INDEX CONCURRENTLY cannot run in a transaction, ` +
        "so each must be the only statement of a migration of its own (see docs/operations.md, Upgrades and migrations)",
    );
  };
  const statement = text.replace(/;\s*$/, "");
  if (statement.includes(";")) refuse("it mixes CONCURRENTLY with other statements");
  const create = CREATE.exec(statement);
  if (create) return { kind: "create", index: create[1] as string };
  const drop = DROP.exec(statement);
  if (drop) return { kind: "drop", index: drop[1] as string };
  if (/^CREATE\s+(?:UNIQUE\s+)?INDEX\s+CONCURRENTLY\s+(?:IF\s+NOT\s+EXISTS\s+)?ON\s/i.test(statement)) {
    refuse("its index has no name, so an index a failed build leaves behind could not be found and dropped");
  }
  return refuse("CONCURRENTLY is only supported in CREATE INDEX and DROP INDEX (one index per migration)");
}
