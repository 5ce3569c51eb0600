/**
 * Pages of tasks bounded in bytes as well as in rows.
 *
 * Why: a page of 500 tasks with 256 KiB payloads is 128 MB of JSON, held
 * several times over in the gateway (rows, parsed values, the answer). One
 * such `tasks(first: 500)` call ran a gateway with the heap Node gives a
 * 1 GiB container out of memory (session 45), for every tenant. So a page
 * ends early, as DynamoDB's 1 MB pages do, once its tasks' payloads and
 * results would pass PAGE_BODY_BYTES: fewer than `first` tasks,
 * hasNextPage true, and the cursor goes on from its last task. The cut is
 * made in Postgres, so the bodies past it never reach the gateway; a page
 * always holds at least one task (one task's bodies are bounded on their
 * own).
 */
import { ANSWER_BODY_BYTES } from "@tasklane/core";

/** Payloads and results of one page, in bytes of their JSON text (an answer's bound, core's ANSWER_BODY_BYTES). */
export const PAGE_BODY_BYTES = ANSWER_BODY_BYTES;

/**
 * A jsonb value's size as the gateway will hold it: its uncompressed binary
 * size, which is within a small factor of its JSON text (larger for small
 * objects; half for a string of escaped characters). The stored size will
 * not do (a 256 KiB payload of repeated text is stored in ~3 KB), and
 * rendering it as text costs ~225 µs for a 21 KB payload, which a lease
 * pays per task. `x #> '{}'` (the empty path) hands back the value
 * detoasted, so pg_column_size reads its raw size for the cost of the
 * decompression alone (~8 µs for the same payload; nothing for a small
 * inline one).
 */
export const jsonBytes = (column: string) => `COALESCE(pg_column_size(${column} #> '{}'), 0)`;

/**
 * `candidates` (rows carrying the task's `payload` and `result`) with, on
 * each row, page_row (its place in `order`), page_body_bytes (its bodies)
 * and page_bytes (the bodies up to and including it, in `order`).
 */
const measuredSql = (candidates: string, order: string) => `SELECT c.*, row_number() OVER w AS page_row, sum(c.page_body_bytes) OVER w AS page_bytes
      FROM (SELECT c0.*, ${jsonBytes("c0.payload")} + ${jsonBytes("c0.result")} AS page_body_bytes FROM (${candidates}) c0) c
      WINDOW w AS (ORDER BY ${order} ROWS UNBOUNDED PRECEDING)`;

/**
 * Wraps `candidates` — a query whose rows carry the task's `payload` and
 * `result` and which returns at most first + 1 rows, ordered by `order`
 * (over its output columns) — so that it returns the rows of the page:
 * at most `first`, and beyond the first only while the bodies so far fit
 * in `budget`. Every row carries `page_candidates`, the number of rows
 * `candidates` returned (pageOf reads it).
 */
export function budgetedPageSql(candidates: string, order: string, first: string, budget: string): string {
  return `SELECT * FROM (
      SELECT m.*, count(*) OVER () AS page_candidates FROM (${measuredSql(candidates, order)}) m
    ) page
    WHERE page.page_row <= ${first} AND (page.page_row = 1 OR page.page_bytes <= ${budget})
    ORDER BY ${order}`;
}

/**
 * For reads that must return every row (a workflow's tasks, schedules'
 * runs): wraps `candidates` so that it returns all its rows, ordered by
 * `order`, but those past `budget` bytes of bodies (in that order) with
 * payload and result NULL, and payload_withheld / result_withheld true where
 * there was one (a null result past the budget stays a plain null); so those
 * bodies never leave Postgres (mapTaskRow turns them into WITHHELD_BODY). `columns` are
 * the other output columns of `candidates` to return. Each row carries
 * page_body_bytes, its bodies' size: the answer's spend is that of the rows
 * not withheld (bodyBytesOf).
 */
export function withheldBodiesSql(candidates: string, columns: readonly string[], order: string, budget: string): string {
  const kept = `m.page_bytes <= ${budget}`;
  return `SELECT ${columns.map((c) => `m.${c}`).join(", ")},
      CASE WHEN ${kept} THEN m.payload END AS payload, CASE WHEN ${kept} THEN m.result END AS result,
      NOT (${kept}) AND m.payload IS NOT NULL AS payload_withheld, NOT (${kept}) AND m.result IS NOT NULL AS result_withheld,
      m.page_body_bytes
    FROM (${measuredSql(candidates, order)}) m
    ORDER BY ${order}`;
}

/** Bytes of bodies withheldBodiesSql handed over in `rows`. */
export function bodyBytesOf(rows: ReadonlyArray<{ payload_withheld?: unknown; result_withheld?: unknown; page_body_bytes?: unknown }>): number {
  let bytes = 0;
  // A row past the budget without bodies measures 0.
  for (const row of rows) if (row.payload_withheld !== true && row.result_withheld !== true) bytes += Number(row.page_body_bytes ?? 0);
  return bytes;
}

/** Whether more tasks follow the page budgetedPageSql returned in `rows`. */
export function hasMoreThan(rows: ReadonlyArray<{ page_candidates?: unknown }>): boolean {
  const candidates = Number(rows[0]?.page_candidates ?? 0);
  return candidates > rows.length;
}

/** SQL: bytes of JSON text of the payload and result of the task row `alias` (the notifier's fan-out claims by it). */
export const taskBodyBytesSql = (alias: string) => `${jsonBytes(`${alias}.payload`)} + ${jsonBytes(`${alias}.result`)}`;
