/**
 * How much of one gateway a tenant's WebSockets may hold. Every subscription
 * receives every event of its tenant and buffers up to 10,000 of them (~22 KB
 * each when idle, measured), and every event is fanned out to each one: with
 * no bound, one tenant's thousands of subscriptions slowed every other
 * tenant's calls to seconds and took the gateway's memory past a gigabyte.
 */
import { QuotaExceededError } from "@tasklane/core";

/** Operations (subscriptions, and queries or mutations in flight) one socket may hold at once. */
export const MAX_OPERATIONS_PER_SOCKET = 100;
/** Sockets one tenant may hold open on one gateway. */
export const MAX_SOCKETS_PER_TENANT = 100;
/** Operations one tenant may hold across its sockets on one gateway. */
export const MAX_OPERATIONS_PER_TENANT = 500;

/** What the counts read of a graphql-ws connection: its operations in flight, by id. */
export interface CountedSocket {
  readonly subscriptions: Readonly<Record<string, unknown>>;
}

export class SocketQuotas {
  readonly #byTenant = new Map<string, Set<CountedSocket>>();
  readonly #tenantOf = new WeakMap<CountedSocket, string>();

  /** Registers a tenant's new socket; false when the tenant already holds its share of sockets. */
  open(tenantId: string, socket: CountedSocket): boolean {
    const sockets = this.#byTenant.get(tenantId) ?? new Set<CountedSocket>();
    if (sockets.size >= MAX_SOCKETS_PER_TENANT) return false;
    sockets.add(socket);
    this.#byTenant.set(tenantId, sockets);
    this.#tenantOf.set(socket, tenantId);
    return true;
  }

  close(socket: CountedSocket): void {
    const tenantId = this.#tenantOf.get(socket);
    const sockets = tenantId === undefined ? undefined : this.#byTenant.get(tenantId);
    if (tenantId === undefined || sockets === undefined) return;
    sockets.delete(socket);
    if (sockets.size === 0) this.#byTenant.delete(tenantId);
  }

  /** The sockets of `socket`'s tenant, itself included (none when it was never registered). */
  peers(socket: CountedSocket): ReadonlySet<CountedSocket> {
    const tenantId = this.#tenantOf.get(socket);
    return (tenantId === undefined ? undefined : this.#byTenant.get(tenantId)) ?? new Set([socket]);
  }

  /**
   * Null when the operation `socket` has just registered may run, else the refusal (QUOTA_EXCEEDED,
   * naming the limit). Called before anything is awaited: graphql-ws registers each operation as its
   * message arrives, so a burst is counted in arrival order, this one included.
   */
  refusal(socket: CountedSocket): QuotaExceededError | null {
    const tenantId = this.#tenantOf.get(socket);
    if (tenantId === undefined) return null;
    if (Object.keys(socket.subscriptions).length > MAX_OPERATIONS_PER_SOCKET) {
      return new QuotaExceededError(`At most ${MAX_OPERATIONS_PER_SOCKET} operations at once on one connection`, { quota: "operationsPerConnection", limit: MAX_OPERATIONS_PER_SOCKET });
    }
    let open = 0;
    for (const other of this.#byTenant.get(tenantId) ?? []) open += Object.keys(other.subscriptions).length;
    if (open > MAX_OPERATIONS_PER_TENANT) {
      return new QuotaExceededError(`At most ${MAX_OPERATIONS_PER_TENANT} WebSocket operations at once per tenant on one gateway`, { quota: "operationsPerTenant", limit: MAX_OPERATIONS_PER_TENANT });
    }
    return null;
  }
}
