/** The tenant's API keys. */
import "server-only";
import { gql } from "../gateway";
import type { ApiResult } from "../graphql-error";
import type { ApiKey } from "./types";

const KEY = `id name prefix scopes createdAt lastUsedAt revokedAt expiresAt`;

export async function listApiKeys(): Promise<ApiResult<ApiKey[]>> {
  const result = await gql<{ apiKeys: ApiKey[] }>(`query ConsoleApiKeys { apiKeys { ${KEY} } }`);
  return result.ok ? { ok: true, data: result.data.apiKeys } : result;
}

export async function createApiKey(name: string, scopes: string[]): Promise<ApiResult<{ apiKey: ApiKey; secret: string }>> {
  const result = await gql<{ createApiKey: { apiKey: ApiKey; secret: string } }>(
    `mutation ConsoleCreateApiKey($name: String!, $scopes: [String!]) { createApiKey(name: $name, scopes: $scopes) { apiKey { ${KEY} } secret } }`,
    { name, scopes },
  );
  return result.ok ? { ok: true, data: result.data.createApiKey } : result;
}

export async function revokeApiKey(id: string): Promise<ApiResult<ApiKey>> {
  const result = await gql<{ revokeApiKey: ApiKey }>(`mutation ConsoleRevokeApiKey($id: ID!) { revokeApiKey(id: $id) { ${KEY} } }`, { id });
  return result.ok ? { ok: true, data: result.data.revokeApiKey } : result;
}
