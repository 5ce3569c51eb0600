/**
 * The request a piece of code runs for. It travels explicitly (res.locals,
 * then the GraphQL context), not in an AsyncLocalStorage: entering one turns
 * on Node's promise hooks for the whole process, and every promise of every
 * request then paid for them (50-150 us of gateway CPU per call, measured in
 * test/bench/findings.md). Apollo's formatError receives no context, so the
 * errors of a request are tagged with its scope before they are formatted.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "./logger.js";

export interface RequestScope {
  readonly requestId: string;
  readonly log: Logger;
  /** The calling tenant, once its credential is known: a logged error names it beside the requestId. */
  readonly tenantId?: string | undefined;
}

const errorScopes = new WeakMap<object, RequestScope>();

/** Marks `error` as raised while serving `scope` (for formatError, which sees the error alone). */
export function tagErrorScope(error: unknown, scope: RequestScope): void {
  if (typeof error === "object" && error !== null) errorScopes.set(error, { requestId: scope.requestId, log: scope.log, tenantId: scope.tenantId });
}

/** The scope `error` itself was tagged with (formatError looks through the errors it wraps). */
export function errorScopeTaggedOn(error: unknown): RequestScope | undefined {
  return typeof error === "object" && error !== null ? errorScopes.get(error) : undefined;
}

// A caller-supplied id is kept only when it is short and plain, so it cannot inject into logs.
const INCOMING_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && INCOMING_ID.test(value) ? value : randomUUID();
}
