/**
 * The request a piece of code runs for, without threading it through every
 * call: Apollo's formatError receives no context, yet a masked error must
 * carry the requestId the client can quote to an operator.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { Logger } from "./logger.js";

export interface RequestScope {
  readonly requestId: string;
  readonly log: Logger;
  /** The caller's W3C traceparent, when it sent a well-formed one: tasks it submits join that trace. */
  readonly traceParent?: string | null;
}

const storage = new AsyncLocalStorage<RequestScope>();

export function runInRequestScope<T>(scope: RequestScope, fn: () => T): T {
  return storage.run(scope, fn);
}

export function currentRequestScope(): RequestScope | undefined {
  return storage.getStore();
}

// A caller-supplied id is kept only when it is short and plain, so it cannot inject into logs.
const INCOMING_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && INCOMING_ID.test(value) ? value : randomUUID();
}
