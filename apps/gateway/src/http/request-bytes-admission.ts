/**
 * Admits an HTTP request only while the gateway's bound on held request
 * bodies has room for its body (limits/request-bytes-budget.ts); otherwise
 * answers 503 OVERLOADED with Retry-After before the body is read. Both the
 * /graphql fast path and Express sit behind it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode } from "@tasklane/core";
import type { RequestBytesBudget } from "../limits/request-bytes-budget.js";
import { MAX_BODY_BYTES } from "./graphql-guards.js";

/** A held body is released within one request's time; a second is the right order of magnitude to wait. */
export const REQUEST_BYTES_RETRY_AFTER_SECONDS = 1;

const REFUSAL_BODY = JSON.stringify({
  errors: [
    {
      message: "Service overloaded, try again later",
      extensions: { code: ErrorCode.OVERLOADED, retryAfterSeconds: REQUEST_BYTES_RETRY_AFTER_SECONDS },
    },
  ],
});

/**
 * The bytes a request's body will hold: its Content-Length; a chunked body
 * of unknown length may grow to MAX_BODY_BYTES, so it is charged that. A
 * body declared over MAX_BODY_BYTES is refused 413 and read into nothing,
 * and a request without a body holds nothing.
 */
export function bodyBytesToHold(req: IncomingMessage): number {
  const declared = req.headers["content-length"];
  if (declared !== undefined) {
    const bytes = Number(declared);
    return Number.isSafeInteger(bytes) && bytes > 0 && bytes <= MAX_BODY_BYTES ? bytes : 0;
  }
  return req.headers["transfer-encoding"] === undefined ? 0 : MAX_BODY_BYTES;
}

export interface RequestBytesAdmissionOptions {
  budget: RequestBytesBudget;
  /** Called once per refused request. */
  onRefusal(): void;
}

/**
 * Returns true when `req` may be served (its body's bytes are held until the
 * response closes, however it ends); false when it was answered 503 here.
 */
export function requestBytesAdmission({ budget, onRefusal }: RequestBytesAdmissionOptions): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    const bytes = bodyBytesToHold(req);
    if (bytes === 0) return true;
    // One caller is one credential; without one, all anonymous callers share a share.
    const client = req.headers.authorization ?? "";
    if (budget.tryTake(client, bytes)) {
      res.once("close", () => budget.release(client, bytes));
      return true;
    }
    onRefusal();
    // Read the body into nothing, as for a 413, so a client still sending gets this answer, not a broken pipe.
    req.resume();
    res.writeHead(503, {
      "content-type": "application/json; charset=utf-8",
      "content-length": Buffer.byteLength(REFUSAL_BODY),
      "retry-after": String(REQUEST_BYTES_RETRY_AFTER_SECONDS),
    });
    res.end(REFUSAL_BODY);
    return false;
  };
}
