/**
 * Admits an HTTP request only while the gateway's bound on held request
 * bodies has room for its body (limits/request-bytes-budget.ts), within its
 * caller's share; otherwise answers 503 OVERLOADED with Retry-After before
 * the body is read. Both the /graphql fast path and Express sit behind it.
 * The caller is authenticated first (from the headers; the body is not
 * needed), so one tenant's many keys share one share and made-up
 * credentials share the anonymous allowance.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ErrorCode, UnauthenticatedError } from "@tasklane/core";
import type { Principal } from "../auth/principal.js";
import type { RequestBytesBudget } from "../limits/request-bytes-budget.js";
import { MAX_BODY_BYTES, sendJson } from "./graphql-guards.js";

/** A held body is released within one request's time; a second is the right order of magnitude to wait. */
export const REQUEST_BYTES_RETRY_AFTER_SECONDS = 1;

const REFUSAL = {
  errors: [
    {
      message: "Service overloaded, try again later",
      extensions: { code: ErrorCode.OVERLOADED, retryAfterSeconds: REQUEST_BYTES_RETRY_AFTER_SECONDS },
    },
  ],
};

/**
 * What a caller without a valid credential is answered when its body could
 * never fit the anonymous allowance: every operation but `{ __typename }`
 * needs a credential, so this is the answer the body would get anyway, and
 * unlike OVERLOADED it does not tell the caller to send it again.
 */
const UNAUTHENTICATED = {
  errors: [{ message: new UnauthenticatedError().message, extensions: { code: ErrorCode.UNAUTHENTICATED } }],
};

/**
 * The bytes a request's body will hold: its Content-Length; a chunked body
 * of unknown length may grow to MAX_BODY_BYTES, so it is charged that, and
 * so is a compressed one (Express inflates it, up to MAX_BODY_BYTES, so its
 * Content-Length says nothing of what it holds: 10 KB of gzip is 8 MiB of
 * JSON whitespace). A body declared over MAX_BODY_BYTES is refused 413 and
 * read into nothing, and a request without a body holds nothing.
 */
export function bodyBytesToHold(req: IncomingMessage): number {
  const declared = req.headers["content-length"];
  const encoding = req.headers["content-encoding"];
  const compressed = encoding !== undefined && encoding.trim().toLowerCase() !== "identity";
  if (declared !== undefined) {
    const bytes = Number(declared);
    if (!(Number.isSafeInteger(bytes) && bytes > 0 && bytes <= MAX_BODY_BYTES)) return 0;
    return compressed ? MAX_BODY_BYTES : bytes;
  }
  return req.headers["transfer-encoding"] === undefined ? 0 : MAX_BODY_BYTES;
}

/** Anonymous callers (no credential, or one that did not check out) together: they have no use for large bodies. */
export const ANONYMOUS_MAX_BYTES = 1024 * 1024;

export interface RequestBytesAdmissionOptions {
  budget: RequestBytesBudget;
  /** Who calls: shares are per tenant, so invented credentials cannot add up to the whole bound. */
  principalFor(authorization: string | undefined): Promise<Principal>;
  /** Called once per refused request. */
  onRefusal(): void;
}

/**
 * Admitted: serve the request (its body's bytes are held until the response
 * closes, however it ends); `principal` is who calls, when it was resolved.
 * Not admitted: it was answered 503 here, or its client left meanwhile.
 */
export type Admission = { admitted: true; principal?: Principal } | { admitted: false };

const NOTHING_HELD: Admission = { admitted: true };

function shareKey(principal: Principal): string {
  switch (principal.kind) {
    case "tenant":
      return `tenant:${principal.tenantId}`;
    case "operator":
      return "operator";
    case "anonymous":
      return "anonymous";
  }
}

export function requestBytesAdmission({ budget, principalFor, onRefusal }: RequestBytesAdmissionOptions): (req: IncomingMessage, res: ServerResponse) => Promise<Admission> {
  return async (req, res) => {
    const bytes = bodyBytesToHold(req);
    if (bytes === 0) return NOTHING_HELD;
    // Listening first: a client that leaves while its credential is checked must not keep bytes.
    let held: string | undefined;
    let closed = false;
    res.once("close", () => {
      closed = true;
      if (held !== undefined) budget.release(held, bytes);
    });
    let principal: Principal | undefined;
    try {
      principal = await principalFor(req.headers.authorization);
    } catch {
      // Postgres unreachable: the request's own authentication fails the same way and answers OVERLOADED.
      principal = undefined;
    }
    if (closed) return { admitted: false };
    const key = principal === undefined ? "unresolved" : shareKey(principal);
    if (budget.tryTake(key, bytes, principal?.kind === "anonymous" ? ANONYMOUS_MAX_BYTES : undefined)) {
      held = key;
      return principal === undefined ? NOTHING_HELD : { admitted: true, principal };
    }
    // Read the body into nothing, as for a 413, so a client still sending gets this answer, not a broken pipe.
    req.resume();
    if (principal?.kind === "anonymous" && bytes > ANONYMOUS_MAX_BYTES) {
      // Never admitted, however long it waits: OVERLOADED would have a client with a revoked key resend it forever.
      sendJson(res, 200, UNAUTHENTICATED);
      return { admitted: false };
    }
    onRefusal();
    res.setHeader("retry-after", String(REQUEST_BYTES_RETRY_AFTER_SECONDS));
    sendJson(res, 503, REFUSAL);
    return { admitted: false };
  };
}
