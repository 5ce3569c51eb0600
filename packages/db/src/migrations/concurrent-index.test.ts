import { describe, expect, it } from "vitest";
import { concurrentIndexMigration } from "./concurrent-index.js";

describe("concurrentIndexMigration", () => {
  it("leaves a migration without CONCURRENTLY to the transaction", () => {
    expect(concurrentIndexMigration("m", "CREATE INDEX a ON t (x);\nALTER TABLE t ADD COLUMN y int;")).toBeUndefined();
    expect(concurrentIndexMigration("m", "-- built CONCURRENTLY in the next release\nCREATE INDEX a ON t (x);")).toBeUndefined();
  });

  it("recognises one CREATE or DROP INDEX CONCURRENTLY statement and the index it names", () => {
    expect(concurrentIndexMigration("m", "-- big table\nCREATE INDEX CONCURRENTLY \"tasks_x_idx\" ON \"tasks\" (\"x\");\n")).toEqual({ kind: "create", index: '"tasks_x_idx"' });
    expect(concurrentIndexMigration("m", "create unique index concurrently if not exists t_y ON t USING btree (y) WHERE y > 0")).toEqual({ kind: "create", index: "t_y" });
    expect(concurrentIndexMigration("m", "DROP INDEX CONCURRENTLY IF EXISTS public.t_y;")).toEqual({ kind: "drop", index: "public.t_y" });
  });

  it("refuses CONCURRENTLY mixed with other statements, an unnamed index, or elsewhere, saying why", () => {
    expect(() => concurrentIndexMigration("20270101_x", "CREATE INDEX CONCURRENTLY a ON t (x);\nCREATE INDEX b ON t (y);")).toThrow(
      /^Migration 20270101_x: it mixes CONCURRENTLY with other statements\. .*must be the only statement of a migration of its own/,
    );
    expect(() => concurrentIndexMigration("m", "ALTER TABLE t ADD COLUMN y int; DROP INDEX CONCURRENTLY a;")).toThrow(/mixes CONCURRENTLY/);
    expect(() => concurrentIndexMigration("m", "CREATE INDEX CONCURRENTLY ON t (x);")).toThrow(/has no name/);
    expect(() => concurrentIndexMigration("m", "REINDEX INDEX CONCURRENTLY a;")).toThrow(/only supported in CREATE INDEX and DROP INDEX/);
  });
});
