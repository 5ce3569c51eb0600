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

/** Payloads and results of one page, in bytes of their JSON text. */
export const PAGE_BODY_BYTES = 4 * 1024 * 1024;

/**
 * A jsonb value's size as JSON text. Values under TOAST's 2 KB threshold are
 * stored uncompressed, their stored size close to their text's, so only
 * larger ones are rendered to text to be measured (a compressed 256 KiB
 * payload can be stored in a few KB).
 */
const jsonBytes = (column: string) =>
  `COALESCE(CASE WHEN pg_column_size(${column}) < 2000 THEN pg_column_size(${column}) ELSE octet_length(${column}::text) END, 0)`;

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
      SELECT c.*, row_number() OVER w AS page_row, sum(c.page_body_bytes) OVER w AS page_bytes, count(*) OVER () AS page_candidates
      FROM (SELECT c0.*, ${jsonBytes("c0.payload")} + ${jsonBytes("c0.result")} AS page_body_bytes FROM (${candidates}) c0) c
      WINDOW w AS (ORDER BY ${order} ROWS UNBOUNDED PRECEDING)
    ) page
    WHERE page.page_row <= ${first} AND (page.page_row = 1 OR page.page_bytes <= ${budget})
    ORDER BY ${order}`;
}

/** Whether more tasks follow the page budgetedPageSql returned in `rows`. */
export function hasMoreThan(rows: ReadonlyArray<{ page_candidates?: unknown }>): boolean {
  const candidates = Number(rows[0]?.page_candidates ?? 0);
  return candidates > rows.length;
}
