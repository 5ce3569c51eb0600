import { LRUCache } from "lru-cache";
import pg from "pg";

/** timestamptz and timestamp: the only types whose parsing showed up in a profile. */
const TIMESTAMP_OIDS = [pg.types.builtins.TIMESTAMPTZ, pg.types.builtins.TIMESTAMP];

/**
 * pg's own parser (postgres-date, ~0.5 µs a value) with the last few texts
 * remembered. A hot-path statement answers for a batch whose rows share most
 * of their timestamps: one INSERT gave them all the same created_at and
 * run_at, one lease the same started_at and lease_expires_at. Parsing was
 * 3–4% of a 100-task lease call's gateway CPU. Each call still returns its own
 * Date, since a Date is mutable.
 */
export function rememberingTimestampParser(parse: (text: string) => unknown): (text: string) => unknown {
  const recent = new LRUCache<string, number>({ max: 16 });
  return (text) => {
    const known = recent.get(text);
    if (known !== undefined) return new Date(known);
    const value = parse(text);
    // 'infinity' parses to a number, not a Date: passed through, not remembered.
    if (value instanceof Date) recent.set(text, value.getTime());
    return value;
  };
}

/** The pool's type parsers: pg's defaults, timestamps through rememberingTimestampParser. */
export function poolTypeParsers(): { getTypeParser: typeof pg.types.getTypeParser } {
  const timestamps = new Map(TIMESTAMP_OIDS.map((oid) => [oid as number, rememberingTimestampParser(pg.types.getTypeParser(oid, "text"))]));
  const getTypeParser = ((oid: number, format?: "text" | "binary") => {
    const remembering = format === "binary" ? undefined : timestamps.get(oid);
    return remembering ?? pg.types.getTypeParser(oid, format);
  }) as typeof pg.types.getTypeParser;
  return { getTypeParser };
}
