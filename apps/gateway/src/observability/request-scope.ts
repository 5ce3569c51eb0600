/**
 * The request a piece of code runs for. It travels explicitly (res.locals,
 * then the GraphQL context), not in an AsyncLocalStorage: entering one turns
 * on Node's promise hooks for the whole process, and every promise of every
 * request then paid for them (50-150 us of gateway CPU per call, measured in
 * test/bench/analysis.md). Apollo's formatError receives no context, so the
 * errors of a request are tagged with its scope before they are formatted.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "./logger.js";

export interface RequestScope {
  readonly requestId: string;
  readonly log: Logger;
}

const errorScopes = new WeakMap<object, RequestScope>();

/** Marks `error` as raised while serving `scope` (for formatError, which sees the error alone). */
export function tagErrorScope(error: unknown, scope: RequestScope): void {
  if (typeof error === "object" && error !== null) errorScopes.set(error, { requestId: scope.requestId, log: scope.log });
}

/** The scope `error` (or an error it wraps) was tagged with. */
export function errorScopeOf(error: unknown): RequestScope | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const scope = errorScopes.get(current);
    if (scope !== undefined) return scope;
    current = (current as { originalError?: unknown }).originalError;
  }
  return undefined;
}

// A caller-supplied id is kept only when it is short and plain, so it cannot inject into logs.
const INCOMING_ID = /^[A-Za-z0-9._-]{8,64}$/;

export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && INCOMING_ID.test(value) ? value : randomUUID();
}
