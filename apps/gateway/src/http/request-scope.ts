/** Gives each HTTP request an id (echoed in X-Request-Id), a child logger and the caller's traceparent, in res.locals. */
import { validTraceParent } from "@tasklane/observability";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../observability/logger.js";
import { requestIdFrom } from "../observability/request-scope.js";

export function requestScope(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    const child = log.child({ requestId });
    const started = process.hrtime.bigint();
    res.setHeader("x-request-id", requestId);
    res.locals.requestId = requestId;
    res.locals.log = child;
    // The caller's W3C traceparent, when it sent a well-formed one: tasks it submits join that trace.
    res.locals.traceParent = validTraceParent(req.headers.traceparent);
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      child.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request served");
    });
    next();
  };
}
