/**
 * A bound on the request bodies this gateway holds at once, in bytes.
 *
 * Why: a body is held several times over while its request runs (the bytes,
 * the decoded string, the parsed value, each task's serialised payload), and
 * bodies above ~128 KB live in V8's large-object space until a full GC. With
 * the heap Node sizes from a 1 GiB container (old space ~256 MB), 400
 * concurrent 250 KiB submissions from 8 tenants, each within its own rate
 * limit, crashed the gateway with "JavaScript heap out of memory"
 * (session 45). The per-tenant operation bound does not help: a waiting
 * operation has already read its body. Past this bound a request is refused
 * before its body is read (503 OVERLOADED, Retry-After), so memory stays
 * predictable and every other request keeps being served.
 *
 * One caller (one tenant) may hold at most `clientShare` of the bound, so a
 * single producer's burst of large batches cannot refuse everyone else.
 */
export interface RequestBytesBudgetOptions {
  /** Bytes of request bodies held at once, all callers together. */
  maxBytes: number;
  /** The fraction of maxBytes one caller may hold (0 < share ≤ 1). */
  clientShare?: number;
}

export const DEFAULT_CLIENT_SHARE = 0.5;

export class RequestBytesBudget {
  readonly maxBytes: number;
  readonly maxClientBytes: number;
  private held = 0;
  private readonly heldByClient = new Map<string, number>();

  constructor({ maxBytes, clientShare = DEFAULT_CLIENT_SHARE }: RequestBytesBudgetOptions) {
    if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) throw new RangeError(`maxBytes must be a positive integer, got ${maxBytes}`);
    if (!(clientShare > 0 && clientShare <= 1)) throw new RangeError(`clientShare must be in (0, 1], got ${clientShare}`);
    this.maxBytes = maxBytes;
    this.maxClientBytes = Math.max(1, Math.floor(maxBytes * clientShare));
  }

  /** Bytes held now, all callers together. */
  get heldBytes(): number {
    return this.held;
  }

  /**
   * Takes `bytes` for `client` if both the whole bound and the client's share
   * (or `clientMax`, when smaller) have room; a caller that gets true must
   * `release` the same amount once. An empty body takes nothing and is
   * always admitted.
   */
  tryTake(client: string, bytes: number, clientMax = this.maxClientBytes): boolean {
    if (bytes <= 0) return true;
    const clientHeld = this.heldByClient.get(client) ?? 0;
    if (this.held + bytes > this.maxBytes || clientHeld + bytes > Math.min(clientMax, this.maxClientBytes)) return false;
    this.held += bytes;
    this.heldByClient.set(client, clientHeld + bytes);
    return true;
  }

  release(client: string, bytes: number): void {
    if (bytes <= 0) return;
    const clientHeld = (this.heldByClient.get(client) ?? 0) - bytes;
    if (clientHeld > 0) this.heldByClient.set(client, clientHeld);
    else this.heldByClient.delete(client);
    this.held = Math.max(0, this.held - bytes);
  }
}
