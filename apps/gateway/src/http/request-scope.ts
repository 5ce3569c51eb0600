/** Gives each HTTP request an id (echoed in X-Request-Id), a child logger and the caller's traceparent. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { validTraceParent } from "@tasklane/observability";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../observability/logger.js";
import { requestIdFrom, type RequestScope } from "../observability/request-scope.js";

export interface HttpRequestScope extends RequestScope {
  /** The caller's W3C traceparent, when it sent a well-formed one: tasks it submits join that trace. */
  readonly traceParent: string | null;
}

/** A request URL's path and its query string (with the "?", or ""). */
export function splitUrl(url = ""): { path: string; search: string } {
  const query = url.indexOf("?");
  return query === -1 ? { path: url, search: "" } : { path: url.slice(0, query), search: url.slice(query) };
}

/**
 * Opens the scope of one request: its id on the response, and, when debug
 * lines are written at all, one when it is served (its timer and listener
 * are not set up for every request of a gateway logging at info).
 */
export function openRequestScope(req: IncomingMessage, res: ServerResponse, log: Logger): HttpRequestScope {
  const requestId = requestIdFrom(req.headers["x-request-id"]);
  const child = log.child({ requestId });
  res.setHeader("x-request-id", requestId);
  if (child.isLevelEnabled("debug")) {
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      child.debug({ method: req.method, path: splitUrl(req.url).path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request served");
    });
  }
  return { requestId, log: child, traceParent: validTraceParent(req.headers.traceparent) };
}

/** The scope of a request Express serves, in res.locals.scope. */
export function requestScope(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.locals.scope = openRequestScope(req, res, log);
    next();
  };
}

export function scopeOf(res: Response): HttpRequestScope {
  return res.locals.scope as HttpRequestScope;
}
