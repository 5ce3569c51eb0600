import { AssertionError } from "node:assert";
import { errors } from "undici";

/**
 * The status of an informational (1xx) answer that ended a request, which
 * undici reports as an error without the status: HTTP/1.1 lets a 1xx end
 * only an upgrade, and a PUSH request asks for none. undici 7 (client-h1.js)
 * fails a 101 without an Upgrade header on `assert(upgrade)` in its upgrade
 * path and one with it as SocketError "bad upgrade", and a 100 nobody asked
 * for (no `Expect: 100-continue`) as SocketError "bad response". The
 * interim answers it skips (102, 103) never end up here. These are undici's
 * words: execute-push.test.ts holds them against a real server, so an undici
 * that changes them fails there rather than here.
 */
export function interimAnswerStatus(error: unknown): number | undefined {
  if (error instanceof AssertionError) return error.message.includes("assert(upgrade)") ? 101 : undefined;
  if (!(error instanceof errors.SocketError)) return undefined;
  if (error.message === "bad upgrade") return 101;
  if (error.message === "bad response") return 100;
  return undefined;
}
