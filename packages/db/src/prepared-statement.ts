import { createHash } from "node:crypto";
import type pg from "pg";

const statementNames = new Map<string, string>();

/**
 * A hot-path statement as a named prepared statement: each connection parses,
 * analyses and rewrites it once, and Postgres's plan cache may then reuse a
 * generic plan, where an unnamed statement went through all of that, and the
 * planner, on every call (planning alone was a fifth of the lease statement's
 * time, and 12-14 ms for each failure). The name is a digest of the text, so a
 * statement built at run time gets one name per distinct text (pg refuses a
 * name reused for other text).
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `tl_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}
