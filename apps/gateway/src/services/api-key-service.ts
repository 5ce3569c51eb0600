/**
 * A tenant's API keys. The secret is returned once; only its sha256 is stored.
 */
import { NotFoundError, hashSecret, isWellFormedId, newApiKeySecret, newId } from "@tasklane/core";
import { prismaRunner, reserveOwnedSlot, type Database, type Prisma } from "@tasklane/db";
import type { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import type { ApiKeyScope } from "../auth/scopes.js";

type ApiKeyRow = Prisma.ApiKeyModel;

export class ApiKeyService {
  constructor(
    private readonly db: Database,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /**
   * `expiresAt`: the key stops authenticating after it (console session keys);
   * omitted = never. A key that never expires takes one of the tenant's
   * MAX_API_KEYS_PER_TENANT slots, exact under concurrent creates
   * (owned-caps.ts): past it QUOTA_EXCEEDED, nothing written. A session key
   * takes none, so signing in to the console (to revoke keys, say) always
   * works; it lives 12 hours and retention deletes it a week after.
   */
  async create(tenantId: string, name: string, scopes: readonly ApiKeyScope[], expiresAt?: Date): Promise<{ row: ApiKeyRow; secret: string }> {
    const key = newApiKeySecret();
    const data = { id: newId("key"), tenantId, name, prefix: key.prefix, secretHash: hashSecret(key.secret), scopes: [...scopes], expiresAt: expiresAt ?? null };
    const row =
      expiresAt === undefined
        ? await this.db.prisma.$transaction(async (tx) => {
            await reserveOwnedSlot(prismaRunner(tx), tenantId, "apiKeys");
            return tx.apiKey.create({ data });
          })
        : await this.db.prisma.apiKey.create({ data });
    return { row, secret: key.secret };
  }

  /**
   * Deletes all but the newest `keep` of the tenant's keys named `name` that
   * expire (console session keys; createApiKey's never expire, so they are
   * never touched here). A deleted key stops authenticating at once here and
   * within the authenticator's cache TTL (≤ 2 s) elsewhere.
   */
  async trimExpiringKeys(tenantId: string, name: string, keep: number): Promise<number> {
    const { rows } = await this.db.pool.query<{ prefix: string }>(
      `DELETE FROM api_keys WHERE id IN (
         SELECT id FROM api_keys WHERE tenant_id = $1 AND name = $2 AND expires_at IS NOT NULL
         ORDER BY created_at DESC, id DESC OFFSET $3)
       RETURNING prefix`,
      [tenantId, name, keep],
    );
    for (const { prefix } of rows) this.authenticator.forget(prefix);
    return rows.length;
  }

  /** Idempotent: revoking a revoked key returns it unchanged. Another tenant's key is NOT_FOUND. */
  async revoke(tenantId: string, id: string): Promise<ApiKeyRow> {
    if (!isWellFormedId("key", id)) throw new NotFoundError("ApiKey", id);
    await this.db.prisma.apiKey.updateMany({ where: { id, tenantId, revokedAt: null }, data: { revokedAt: new Date() } });
    const row = await this.db.prisma.apiKey.findFirst({ where: { id, tenantId } });
    if (row === null) throw new NotFoundError("ApiKey", id);
    // Other gateway instances notice within the authenticator's cache TTL (≤ 2 s).
    this.authenticator.forget(row.prefix);
    return row;
  }

  list(tenantId: string): Promise<ApiKeyRow[]> {
    return this.db.prisma.apiKey.findMany({ where: { tenantId }, orderBy: { createdAt: "asc" } });
  }
}
