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

/** Opens the scope of one request: its id on the response, and a debug line when it is served. */
export function openRequestScope(req: IncomingMessage, res: ServerResponse, log: Logger): HttpRequestScope {
  const requestId = requestIdFrom(req.headers["x-request-id"]);
  const child = log.child({ requestId });
  const started = process.hrtime.bigint();
  res.setHeader("x-request-id", requestId);
  res.on("finish", () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const path = req.url?.split("?", 1)[0];
    child.debug({ method: req.method, path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request served");
  });
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
