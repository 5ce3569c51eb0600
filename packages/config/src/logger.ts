import { pino, type Logger } from "pino";

/** JSON logs; credentials never reach them. */
export function createLogger(app: string, level: string): Logger {
  return pino({
    name: app,
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        "headers.authorization",
        "authorization",
        "*.authorization",
        "apiKey",
        "secret",
        "signingSecret",
        "*.secret",
        "*.signingSecret",
        "*.apiKey",
      ],
      censor: "[redacted]",
    },
  });
}
export type { Logger };
