/**
 * GET /healthz and /readyz: 200 when Postgres and Redis both answer within a
 * second, else 503 naming what failed (no error details: the endpoint is public).
 */
import type { Request, Response } from "express";
import { pingIfConnected, type RedisClient } from "@tasklane/queue";
import type pg from "pg";
import type { Registry } from "prom-client";

const PROBE_TIMEOUT_MS = 1_000;

async function within<T>(ms: number, work: Promise<T>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([work.then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

export function healthHandler(pool: pg.Pool, redis: RedisClient) {
  return async (_req: Request, res: Response): Promise<void> => {
    const [postgres, redisOk] = await Promise.all([
      within(PROBE_TIMEOUT_MS, pool.query("SELECT 1")),
      within(PROBE_TIMEOUT_MS, pingIfConnected(redis)),
    ]);
    res.setHeader("cache-control", "no-store");
    if (postgres && redisOk) {
      res.status(200).json({ status: "ok" });
    } else {
      res.status(503).json({ status: "unavailable", postgres: postgres ? "ok" : "down", redis: redisOk ? "ok" : "down" });
    }
  };
}

/** GET /livez: the process serves HTTP. Dependencies are not checked: restarting the gateway would not bring them back. */
export function livenessHandler() {
  return (_req: Request, res: Response): void => {
    res.setHeader("cache-control", "no-store");
    res.status(200).json({ status: "ok" });
  };
}

export function metricsHandler(registry: Registry) {
  return async (_req: Request, res: Response): Promise<void> => {
    res.setHeader("content-type", registry.contentType);
    res.send(await registry.metrics());
  };
}
