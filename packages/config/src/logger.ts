import { hostname } from "node:os";
import { pino, type DestinationStream, type Logger } from "pino";

/**
 * Paths pino censors in every Tasklane log line, by name, so a credential or
 * tenant data never reaches a log even when a whole object (a request, a
 * delivery, a task) is logged by mistake.
 */
export const REDACT_PATHS = [
  // Credentials in requests.
  "authorization",
  "*.authorization",
  "headers.authorization",
  "*.headers.authorization",
  "req.headers.authorization",
  "headers.cookie",
  "req.headers.cookie",
  "connectionParams.authorization",
  // Secrets and tokens, wherever they sit one level down.
  "secret",
  "*.secret",
  "secrets",
  "*.secrets",
  "signingSecret",
  "*.signingSecret",
  "signingSecrets",
  "*.signingSecrets",
  "previousSigningSecret",
  "*.previousSigningSecret",
  "webhookSecret",
  "*.webhookSecret",
  "apiKey",
  "*.apiKey",
  "adminToken",
  "*.adminToken",
  "password",
  "*.password",
  "leaseToken",
  "*.leaseToken",
  // Tenant data: payloads and results may hold anything (personal data, their own credentials).
  "payload",
  "*.payload",
  "result",
  "*.result",
];

export interface LoggerOptions {
  /** Where lines go; stdout unless given (tests). */
  destination?: DestinationStream;
  /** Censored on top of REDACT_PATHS (the gateway adds GraphQL variables). */
  extraRedactPaths?: readonly string[];
}

/**
 * The one logger factory of every app, so all their lines share one shape:
 * `{"level":30,"time":"<ISO 8601>","app":"worker","pid":…,"hostname":…,"msg":…}`.
 * `app` names the process kind (gateway, scheduler, worker, notifier, migrate);
 * `pid` and `hostname` tell instances apart and are set here once (a child
 * adding `pid` again wrote the key twice).
 */
export function createLogger(app: string, level: string, options: LoggerOptions = {}): Logger {
  const settings = {
    level,
    base: { app, pid: process.pid, hostname: hostname() },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: [...REDACT_PATHS, ...(options.extraRedactPaths ?? [])], censor: "[redacted]" },
  };
  return options.destination === undefined ? pino(settings) : pino(settings, options.destination);
}
export type { Logger };
