import { createRequire } from "node:module";
import { startApp, type AppProcess } from "./app-process.js";

/**
 * The notifier as a process on its dist/bundle/main.js, for webhook and callback
 * tests: the test's database and Redis, private targets allowed (receivers
 * listen on 127.0.0.1), 200 ms polls, warnings only. `env` adds or overrides
 * (WEBHOOK_RETRY_SCHEDULE above all).
 */
export function startTestNotifier(database: { url: string }, redis: { url: string; prefix: string }, env: Record<string, string> = {}): AppProcess {
  return startApp("notifier", {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    REDIS_KEY_PREFIX: redis.prefix,
    ALLOW_PRIVATE_TARGETS: "1",
    NOTIFIER_OUTBOX_POLL_MS: "200",
    NOTIFIER_DELIVERY_POLL_MS: "200",
    LOG_LEVEL: "warn",
    ...env,
  });
}

/** The official Standard Webhooks verifier (the `standardwebhooks` package's CommonJS build); its constructor takes the whole "whsec_…" secret. */
export const StandardWebhook = (
  createRequire(import.meta.url)("standardwebhooks") as {
    Webhook: new (secret: string) => { verify(body: string, headers: Record<string, string>): unknown };
  }
).Webhook;
