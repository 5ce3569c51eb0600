/** Gives each HTTP request an id (echoed in X-Request-Id) and a child logger, for the whole async chain. */
import { validTraceParent } from "@tasklane/observability";
import type { NextFunction, Request, Response } from "express";
import type { Logger } from "../observability/logger.js";
import { requestIdFrom, runInRequestScope } from "../observability/request-scope.js";

export function requestScope(log: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const requestId = requestIdFrom(req.headers["x-request-id"]);
    const child = log.child({ requestId });
    const started = process.hrtime.bigint();
    res.setHeader("x-request-id", requestId);
    res.locals.requestId = requestId;
    res.locals.log = child;
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      child.debug({ method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 }, "request served");
    });
    runInRequestScope({ requestId, log: child, traceParent: validTraceParent(req.headers.traceparent) }, next);
  };
}
