/** Builds a GatewayContext from a credential, for HTTP and WebSocket alike. */
import type { Authenticator } from "../auth/authenticate.js";
import type { Logger } from "../observability/logger.js";
import type { GatewayContext, GatewayServices } from "./context.js";
import { createLoaders } from "./loaders.js";

export type ContextFactory = (
  authorization: unknown,
  scope: { requestId: string; log: Logger; signal?: AbortSignal; traceParent?: string | null },
) => Promise<GatewayContext>;

export function createContextFactory(authenticator: Authenticator, services: GatewayServices): ContextFactory {
  return async (authorization, { requestId, log, signal, traceParent = null }) => ({
    requestId,
    traceParent,
    log,
    ...(signal ? { signal } : {}),
    principal: await authenticator.principalFor(authorization),
    services,
    loaders: createLoaders(services),
  });
}
