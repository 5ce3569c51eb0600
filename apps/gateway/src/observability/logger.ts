/**
 * One pino logger per process; each request gets a child carrying its requestId.
 * Redaction is by path (the platform's REDACT_PATHS, plus GraphQL variables,
 * which hold whatever a client submitted), so a credential never reaches a log
 * line even when a whole request or input object is logged by mistake.
 */
import { REDACT_PATHS as PLATFORM_REDACT_PATHS } from "@tasklane/config";
import { pino, type Logger } from "pino";

export type { Logger };

const REDACT_PATHS = [...PLATFORM_REDACT_PATHS, "variables"];

export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { app: "gateway" },
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
}
