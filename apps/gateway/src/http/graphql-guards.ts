/**
 * Checks on the HTTP envelope before Apollo parses anything: a JSON body, a
 * document of at most 100 KB, batches of 1–20 operations. Refusals use the
 * GraphQL error shape with BAD_USER_INPUT like every other client error.
 */
import { isUtf8 } from "node:buffer";
import type { ErrorRequestHandler, NextFunction, Request, Response } from "express";
import { requestErrorBody } from "../graphql/errors.js";
import type { Logger } from "../observability/logger.js";

export const MAX_DOCUMENT_BYTES = 100 * 1024;
export const MAX_BATCH_OPERATIONS = 20;
/** Room for a 1,000-task submitTasks with sizeable payloads. */
export const MAX_BODY = "8mb";

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

function refuse(res: Response, status: number, message: string): void {
  res.status(status).json(requestErrorBody(message));
}

export function graphqlRequestGuard() {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (req.method === "POST") {
      const body: unknown = req.body;
      if (typeof body !== "object" || body === null) {
        refuse(res, 400, "Expected a JSON body (Content-Type: application/json) holding a GraphQL request");
        return;
      }
      const operations: unknown[] = Array.isArray(body) ? body : [body];
      if (Array.isArray(body) && (body.length === 0 || body.length > MAX_BATCH_OPERATIONS)) {
        refuse(res, 400, `A batch must hold between 1 and ${MAX_BATCH_OPERATIONS} operations`);
        return;
      }
      if (operations.some(documentTooLarge)) {
        refuse(res, 413, `GraphQL documents are limited to ${MAX_DOCUMENT_BYTES / 1024} KB`);
        return;
      }
    } else {
      const query = req.query.query;
      if (typeof query === "string" && Buffer.byteLength(query, "utf8") > MAX_DOCUMENT_BYTES) {
        refuse(res, 413, `GraphQL documents are limited to ${MAX_DOCUMENT_BYTES / 1024} KB`);
        return;
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
      refuse(res, 413, `Request body exceeds ${MAX_BODY}`);
    } else if (typeOf(error) === INVALID_UTF8) {
      refuse(res, 400, "Request body is not valid UTF-8");
    } else if (status !== undefined && status >= 400 && status < 500) {
      refuse(res, status, "Malformed request body: expected JSON");
    } else {
      const requestId: unknown = res.locals.requestId;
      (res.locals.log as Logger | undefined ?? log).error({ err: error }, "unhandled HTTP error");
      res.status(500).json({ errors: [{ message: "Internal server error", extensions: { code: "INTERNAL_SERVER_ERROR", requestId } }] });
    }
  };
}
