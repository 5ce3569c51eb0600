/** Builds a GatewayContext from a credential, for HTTP and WebSocket alike. */
import type { Authenticator } from "../auth/authenticate.js";
import type { Principal } from "../auth/principal.js";
import type { TenantOperations } from "../limits/tenant-operations.js";
import type { RequestScope } from "../observability/request-scope.js";
import type { GatewayContext, GatewayServices } from "./context.js";
import { createLoaders } from "./loaders.js";

/** The request a context is made for: its scope (traceParent from HTTP only) and, for HTTP, a signal that fires when the client goes away. */
export type ContextFactory = (
  authorization: unknown,
  /** `principal`: the caller, when it was already resolved from this same `authorization` (the body admission did). */
  scope: RequestScope & { traceParent?: string | null; signal?: AbortSignal; principal?: Principal | undefined },
) => Promise<GatewayContext>;

export function createContextFactory(authenticator: Authenticator, services: GatewayServices, operations?: TenantOperations): ContextFactory {
  return async (authorization, { requestId, log, signal, traceParent = null, principal }) => ({
    requestId,
    traceParent,
    log,
    ...(signal ? { signal } : {}),
    ...(operations ? { operations } : {}),
    principal: principal ?? (await authenticator.principalFor(authorization)),
    services,
    loaders: createLoaders(services),
  });
}
