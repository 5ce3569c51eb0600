/**
 * Checks on the HTTP envelope before Apollo parses anything: a JSON body, a
 * document of at most 100 KB, batches of 1–20 operations. Refusals use the
 * GraphQL error shape with BAD_USER_INPUT like every other client error.
 */
import { isUtf8 } from "node:buffer";
import type { ServerResponse } from "node:http";
import type { ErrorRequestHandler, NextFunction, Request, Response } from "express";
import { requestErrorBody } from "../graphql/errors.js";
import type { Logger } from "../observability/logger.js";
import type { RequestScope } from "../observability/request-scope.js";
import { scopeOf } from "./request-scope.js";

export const MAX_DOCUMENT_BYTES = 100 * 1024;
export const MAX_BATCH_OPERATIONS = 20;
/** Room for a 1,000-task submitTasks with sizeable payloads. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** body-parser copies `type` onto the error it passes on; the handler below recognises it. */
const INVALID_UTF8 = "encoding.invalid-utf8";

/**
 * express.json's `verify` hook: refuse bytes that are not UTF-8 instead of
 * letting the decoder turn them into U+FFFD and storing a value the client never sent.
 */
export function requireUtf8(_req: unknown, _res: unknown, body: Buffer): void {
  if (!isUtf8(body)) throw Object.assign(new Error("Request body is not valid UTF-8"), { status: 400, type: INVALID_UTF8 });
}

function documentTooLarge(operation: unknown): boolean {
  if (typeof operation !== "object" || operation === null || !("query" in operation)) return false;
  const query: unknown = operation.query;
  return typeof query === "string" && Buffer.byteLength(query, "utf8") > MAX_DOCUMENT_BYTES;
}

/** A refusal of the request before Apollo sees it: its HTTP status and message. */
export interface Refusal {
  status: number;
  message: string;
}

const DOCUMENT_TOO_LARGE: Refusal = { status: 413, message: `GraphQL documents are limited to ${MAX_DOCUMENT_BYTES / 1024} KB` };
export const BODY_TOO_LARGE: Refusal = { status: 413, message: `Request body exceeds ${MAX_BODY_BYTES / 1024 / 1024}mb` };
export const BODY_NOT_UTF8: Refusal = { status: 400, message: "Request body is not valid UTF-8" };
export const BODY_NOT_JSON: Refusal = { status: 400, message: "Malformed request body: expected JSON" };

/** Answers `value` as JSON, on Express's response or a bare one (the /graphql fast path, the body admission). */
export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("content-length", Buffer.byteLength(body));
  res.end(body);
}

/** Writes a refusal in the GraphQL error shape. */
export function refuse(res: ServerResponse, { status, message }: Refusal): void {
  sendJson(res, status, requestErrorBody(message));
}

/** What is wrong with a POSTed body (parsed JSON, or undefined when it was not JSON), if anything. */
export function postBodyRefusal(body: unknown): Refusal | null {
  if (typeof body !== "object" || body === null) {
    return { status: 400, message: "Expected a JSON body (Content-Type: application/json) holding a GraphQL request" };
  }
  if (Array.isArray(body) && (body.length === 0 || body.length > MAX_BATCH_OPERATIONS)) {
    return { status: 400, message: `A batch must hold between 1 and ${MAX_BATCH_OPERATIONS} operations` };
  }
  const operations: unknown[] = Array.isArray(body) ? body : [body];
  if (operations.some(documentTooLarge)) return DOCUMENT_TOO_LARGE;
  return null;
}

/** The answer to an unexpected failure outside GraphQL execution: masked, with the request's id. */
export function internalError(res: ServerResponse, scope: RequestScope | undefined, fallbackLog: Logger, error: unknown): void {
  (scope?.log ?? fallbackLog).error({ err: error }, "unhandled HTTP error");
  if (res.headersSent) return void res.destroy();
  sendJson(res, 500, { errors: [{ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR", requestId: scope?.requestId } }] });
}

export function graphqlRequestGuard() {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method === "POST") {
      const refusal = postBodyRefusal(req.body);
      if (refusal) return refuse(res, refusal);
    } else {
      const query = req.query.query;
      if (typeof query === "string" && Buffer.byteLength(query, "utf8") > MAX_DOCUMENT_BYTES) {
        return refuse(res, DOCUMENT_TOO_LARGE);
      }
      // Apollo's Express integration insists on req.body existing even for GET.
      if (!Reflect.has(req, "body")) req.body = undefined;
    }
    next();
  };
}

function typeOf(error: unknown): unknown {
  return typeof error === "object" && error !== null && "type" in error ? error.type : undefined;
}

function statusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null || !("status" in error)) return undefined;
  return typeof error.status === "number" ? error.status : undefined;
}

/** body-parser's errors (malformed JSON, over the size limit) and anything else thrown before Apollo. */
export function httpErrorHandler(log: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
    const status = statusOf(error);
    if (status === 413) {
      refuse(res, BODY_TOO_LARGE);
    } else if (typeOf(error) === INVALID_UTF8) {
      refuse(res, BODY_NOT_UTF8);
    } else if (status !== undefined && status >= 400 && status < 500) {
      refuse(res, { ...BODY_NOT_JSON, status });
    } else {
      internalError(res, scopeOf(res), log, error);
    }
  };
}
