/**
 * Redis DB indexes owned by test files that wipe Redis (FLUSHDB). Every other
 * file shares DB 0 under its own key prefix; a file listed here is the only
 * user of its index, so its wipes touch nobody else.
 */
export const REDIS_DB = {
  pushExecution: 9,
  gatewayFlow: 10,
  schedules: 11,
  pullWorkers: 12,
  chaos: 13,
  /** Not a test file: the benchmark harness (test/bench, `npm run bench`) flushes DB 15. */
  bench: 15,
} as const;

export const redisUrl = (db: number) => `redis://127.0.0.1:6379/${db}`;
