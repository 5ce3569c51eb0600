/**
 * API key scopes (stored as strings in api_keys.scopes) and what each grants.
 * Operations ask for a Permission; scopes are only ever read through here.
 */
import { assertNever } from "@tasklane/core";

export const ApiKeyScope = {
  /** Everything a tenant may do, including keys, queues, schedules and webhooks. */
  full: "full",
  /** Submit, cancel and redrive tasks; read everything. */
  submit: "submit",
  /** Pull-worker calls (leaseTasks, heartbeat, completeTask, failTask); read everything. */
  worker: "worker",
  /** Queries and subscriptions only. */
  read: "read",
} as const;
export type ApiKeyScope = (typeof ApiKeyScope)[keyof typeof ApiKeyScope];

export const API_KEY_SCOPES: readonly ApiKeyScope[] = Object.values(ApiKeyScope);

export const Permission = {
  /** Queries and subscriptions. */
  READ: "READ",
  /** Creating and steering tasks and workflows. */
  SUBMIT: "SUBMIT",
  /** Leasing and reporting on tasks as a pull worker. */
  WORK: "WORK",
  /** Tenant configuration: keys, secrets, queues, schedules, webhooks. */
  MANAGE: "MANAGE",
} as const;
export type Permission = (typeof Permission)[keyof typeof Permission];

function grants(scope: ApiKeyScope, permission: Permission): boolean {
  switch (scope) {
    case ApiKeyScope.full:
      return true;
    case ApiKeyScope.submit:
      return permission === Permission.READ || permission === Permission.SUBMIT;
    case ApiKeyScope.worker:
      return permission === Permission.READ || permission === Permission.WORK;
    case ApiKeyScope.read:
      return permission === Permission.READ;
    default:
      return assertNever(scope);
  }
}

export function isApiKeyScope(s: string): s is ApiKeyScope {
  return (API_KEY_SCOPES as readonly string[]).includes(s);
}

/** Stored strings that are not (or no longer) scopes grant nothing. */
export function knownScopes(stored: readonly string[]): ApiKeyScope[] {
  return stored.filter(isApiKeyScope);
}

export function hasPermission(scopes: readonly ApiKeyScope[], permission: Permission): boolean {
  return scopes.some((s) => grants(s, permission));
}

/** The scopes a key needs one of for this permission, in API_KEY_SCOPES order: what a refusal names, since users pick scopes, never permissions. */
export function scopesGranting(permission: Permission): ApiKeyScope[] {
  return API_KEY_SCOPES.filter((s) => grants(s, permission));
}
