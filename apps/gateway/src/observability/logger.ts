/**
 * The gateway's logger: the platform's (one line shape for every app), with
 * GraphQL variables censored too, since they hold whatever a client submitted.
 * One per process; each request gets a child carrying its requestId.
 */
import { createLogger as createAppLogger, type Logger } from "@tasklane/config";

export type { Logger };

export function createLogger(level: string): Logger {
  return createAppLogger("gateway", level, { extraRedactPaths: ["variables"] });
}
