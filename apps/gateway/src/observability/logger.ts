/**
 * One pino logger per process; each request gets a child carrying its requestId.
 * Redaction is by path, so a credential never reaches a log line even when a
 * whole request or input object is logged by mistake.
 */
import { pino, type Logger } from "pino";

export type { Logger };

const REDACT_PATHS = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "connectionParams.authorization",
  "secret",
  "*.secret",
  "apiKey",
  "*.apiKey",
  "signingSecret",
  "*.signingSecret",
  "adminToken",
  "*.adminToken",
  "variables",
];

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { app: "gateway" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
