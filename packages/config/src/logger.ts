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

/** JSON logs (pino) with REDACT_PATHS censored. `destination` is for tests; stdout otherwise. */
export function createLogger(app: string, level: string, destination?: DestinationStream): Logger {
  const options = { name: app, level, redact: { paths: REDACT_PATHS, censor: "[redacted]" } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
export type { Logger };
