/**
 * Cursor pagination arguments (`first`, `after`) shared by list queries.
 */
import { z } from "zod";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "../limits.js";

export const paginationSchema = z.object({
  first: z
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .nullish()
    .transform((v) => v ?? DEFAULT_PAGE_SIZE),
  // Opaque cursor; its content is checked by whoever decodes it.
  after: z
    .string()
    .max(200)
    .nullish()
    .transform((v) => v ?? null),
});
export type Pagination = z.output<typeof paginationSchema>;
