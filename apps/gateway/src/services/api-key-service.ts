/**
 * A tenant's API keys. The secret is returned once; only its sha256 is stored.
 */
import { NotFoundError, hashSecret, isWellFormedId, newApiKeySecret, newId } from "@tasklane/core";
import type { Database, Prisma } from "@tasklane/db";
import type { ApiKeyAuthenticator } from "../auth/api-key-authenticator.js";
import type { ApiKeyScope } from "../auth/scopes.js";

type ApiKeyRow = Prisma.ApiKeyModel;

export class ApiKeyService {
  constructor(
    private readonly db: Database,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /** `expiresAt`: the key stops authenticating after it (console session keys); omitted = never. */
  async create(tenantId: string, name: string, scopes: readonly ApiKeyScope[], expiresAt?: Date): Promise<{ row: ApiKeyRow; secret: string }> {
    const key = newApiKeySecret();
    const row = await this.db.prisma.apiKey.create({
      data: { id: newId("key"), tenantId, name, prefix: key.prefix, secretHash: hashSecret(key.secret), scopes: [...scopes], expiresAt: expiresAt ?? null },
    });
    return { row, secret: key.secret };
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
