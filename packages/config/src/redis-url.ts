/**
 * DBs a Redis server has unless its `databases` setting says otherwise; a
 * REDIS_URL naming a higher index is refused when the configuration is read.
 */
export const REDIS_DEFAULT_DATABASES = 16;

/** ioredis options from REDIS_URL; the DB index in the path is honoured. */
export function redisOptionsFromUrl(url: string): {
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls?: Record<string, never>;
} {
  const u = new URL(url);
  const path = u.pathname.length > 1 ? u.pathname.slice(1) : "0";
  // Digits only: Number() would read "" or " " as DB 0 and "1e1" as DB 10.
  const db = /^\d{1,9}$/.test(path) ? Number(path) : Number.NaN;
  if (!Number.isInteger(db)) throw new Error(`REDIS_URL: bad DB index in ${u.pathname}`);
  return {
    host: u.hostname || "127.0.0.1",
    port: u.port ? Number(u.port) : 6379,
    db,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(u.protocol === "rediss:" ? { tls: {} } : {}),
  };
}
