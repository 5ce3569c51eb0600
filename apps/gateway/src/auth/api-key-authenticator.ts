/**
 * Resolves a presented API key to its tenant.
 *
 * Rows are cached per public prefix for at most CACHE_TTL_MS, so a burst of
 * requests costs one lookup while a revocation elsewhere still takes effect
 * within seconds (and at once on the instance that revoked, via `forget`).
 * The secret is verified against the cached hash on every request.
 */
import { apiKeyPrefixOf, hashSecret, safeEqualHex } from "@tasklane/core";
import { prepared, type Database } from "@tasklane/db";
import { LRUCache } from "lru-cache";
import type { Logger } from "../observability/logger.js";
import type { TenantPrincipal } from "./principal.js";
import { knownScopes } from "./scopes.js";

/** Contract: a revoked key must stop working within seconds. */
const CACHE_TTL_MS = 2_000;
/** Bounds memory under a flood of distinct (mostly bogus) prefixes. */
const CACHE_MAX_ENTRIES = 10_000;
/** last_used_at is informational; one write a minute per key keeps it off the hot path. */
const LAST_USED_INTERVAL_MS = 60_000;

interface KeyRow {
  id: string;
  tenantId: string;
  secretHash: string;
  scopes: string[];
  revoked: boolean;
  /** Epoch ms after which the key stops working (console session keys); null = never. */
  expiresAt: number | null;
}

export class ApiKeyAuthenticator {
  /** An unknown prefix is kept too (as a null row), so a flood of bogus keys costs one lookup each per TTL. */
  readonly #cache: LRUCache<string, { row: KeyRow | null }>;
  readonly #lastUsedWrites = new Map<string, number>();

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.#cache = new LRUCache({
      max: CACHE_MAX_ENTRIES,
      ttl: CACHE_TTL_MS,
      // The clock tests move; ttlResolution 0 reads it on every check instead of reusing a reading for a millisecond.
      perf: { now },
      ttlResolution: 0,
      fetchMethod: async (prefix) => ({ row: await this.#read(prefix) }),
    });
  }

  /** The tenant behind `secret`, or null for anything that is not a valid, live key. */
  async authenticate(secret: string): Promise<TenantPrincipal | null> {
    const prefix = apiKeyPrefixOf(secret);
    if (prefix === null) return null;
    const row = await this.#lookup(prefix);
    // Hash and compare even when the row is missing, so an unknown prefix costs the same as a wrong secret.
    const matches = safeEqualHex(hashSecret(secret), row?.secretHash ?? "00".repeat(32));
    if (row === null || row.revoked || !matches) return null;
    if (row.expiresAt !== null && row.expiresAt <= this.now()) return null;
    this.#touch(row.id);
    return { kind: "tenant", tenantId: row.tenantId, apiKeyId: row.id, scopes: knownScopes(row.scopes) };
  }

  /** Drops a cached key at once (after revocation on this instance). */
  forget(prefix: string): void {
    this.#cache.delete(prefix);
  }

  async #lookup(prefix: string): Promise<KeyRow | null> {
    return (await this.#cache.fetch(prefix))?.row ?? null;
  }

  async #read(prefix: string): Promise<KeyRow | null> {
    // Raw SQL: Prisma compiles each query on its way (2-14 ms of CPU here, against ~0.6 for this),
    // and every key comes back here every CACHE_TTL_MS, blocking the requests behind it.
    const res = await this.db.pool.query<{ id: string; tenant_id: string; secret_hash: string; scopes: string[]; revoked_at: Date | null; expires_at: Date | null }>(
      prepared("SELECT id, tenant_id, secret_hash, scopes, revoked_at, expires_at FROM api_keys WHERE prefix = $1", [prefix]),
    );
    const found = res.rows[0];
    if (found === undefined) return null;
    return {
      id: found.id,
      tenantId: found.tenant_id,
      secretHash: found.secret_hash,
      scopes: found.scopes,
      revoked: found.revoked_at !== null,
      expiresAt: found.expires_at?.getTime() ?? null,
    };
  }

  /** Fire-and-forget; the WHERE clause also keeps several gateway instances to ~one write a minute. */
  #touch(keyId: string): void {
    const now = this.now();
    const last = this.#lastUsedWrites.get(keyId);
    if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return;
    this.#lastUsedWrites.set(keyId, now);
    if (this.#lastUsedWrites.size > CACHE_MAX_ENTRIES) this.#lastUsedWrites.clear();
    this.db.pool
      .query(
        `UPDATE api_keys SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
        [keyId],
      )
      .catch((error: unknown) => this.log.warn({ err: error, keyId }, "could not record api key use"));
  }
}
