/**
 * The caller's tenant, its API keys and signing secret (contract: tenant,
 * apiKeys, createApiKey, revokeApiKey, rotateSigningSecret), and the
 * operator calls that need the platform admin token (createTenant,
 * updateTenant).
 */
import { API_KEY_FIELDS, TENANT_FIELDS } from "../graphql/fragments.js";
import type { CallOptions, GraphQLTransport } from "../transport.js";
import type { ApiKey, ApiKeyWithSecret, CreateTenantInput, Tenant, TenantLimitsInput, TenantWithKey } from "../types.js";

const GET = `query Tenant { tenant { ...TenantFields } }
${TENANT_FIELDS}`;
const API_KEYS = `query ApiKeys { apiKeys { ...ApiKeyFields } }
${API_KEY_FIELDS}`;
const CREATE_KEY = `mutation CreateApiKey($name: String!, $scopes: [String!]) { createApiKey(name: $name, scopes: $scopes) { apiKey { ...ApiKeyFields } secret } }
${API_KEY_FIELDS}`;
const REVOKE_KEY = `mutation RevokeApiKey($id: ID!) { revokeApiKey(id: $id) { ...ApiKeyFields } }
${API_KEY_FIELDS}`;
const ROTATE = `mutation RotateSigningSecret { rotateSigningSecret }`;
const CREATE_TENANT = `mutation CreateTenant($input: CreateTenantInput!) { createTenant(input: $input) { tenant { ...TenantFields } apiKey signingSecret } }
${TENANT_FIELDS}`;
const UPDATE_TENANT = `mutation UpdateTenant($id: ID!, $limits: TenantLimitsInput!) { updateTenant(id: $id, limits: $limits) { ...TenantFields } }
${TENANT_FIELDS}`;

export class TenantResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  /** The caller's own tenant, with its limits and usage. */
  async get(opts?: CallOptions): Promise<Tenant> {
    const data = await this.#transport.execute<{ tenant: Tenant }>({ operation: "tenant", document: GET, idempotent: true }, {}, opts);
    return data.tenant;
  }

  async apiKeys(opts?: CallOptions): Promise<ApiKey[]> {
    const data = await this.#transport.execute<{ apiKeys: ApiKey[] }>({ operation: "apiKeys", document: API_KEYS, idempotent: true }, {}, opts);
    return data.apiKeys;
  }

  /** Scopes: full, submit, worker, read. The secret is shown once. */
  async createApiKey(name: string, scopes?: string[], opts?: CallOptions): Promise<ApiKeyWithSecret> {
    const data = await this.#transport.execute<{ createApiKey: ApiKeyWithSecret }>(
      { operation: "createApiKey", document: CREATE_KEY, idempotent: false },
      { name, scopes },
      opts,
    );
    return data.createApiKey;
  }

  async revokeApiKey(id: string, opts?: CallOptions): Promise<ApiKey> {
    const data = await this.#transport.execute<{ revokeApiKey: ApiKey }>({ operation: "revokeApiKey", document: REVOKE_KEY, idempotent: true }, { id }, opts);
    return data.revokeApiKey;
  }

  /** A new signing secret, shown once; the old one stays valid for 24 h. */
  async rotateSigningSecret(opts?: CallOptions): Promise<string> {
    const data = await this.#transport.execute<{ rotateSigningSecret: string }>(
      { operation: "rotateSigningSecret", document: ROTATE, idempotent: false },
      {},
      opts,
    );
    return data.rotateSigningSecret;
  }
}

/** Platform operator calls: construct the client with the admin token as `apiKey`. */
export class OperatorResource {
  readonly #transport: GraphQLTransport;

  constructor(transport: GraphQLTransport) {
    this.#transport = transport;
  }

  /** A tenant with its "default" PULL queue; the API key and signing secret are shown once. */
  async createTenant(input: CreateTenantInput, opts?: CallOptions): Promise<TenantWithKey> {
    const data = await this.#transport.execute<{ createTenant: TenantWithKey }>(
      { operation: "createTenant", document: CREATE_TENANT, idempotent: false },
      { input },
      opts,
    );
    return data.createTenant;
  }

  /** Changes only the given limits; takes effect within 1 s. */
  async updateTenant(id: string, limits: TenantLimitsInput, opts?: CallOptions): Promise<Tenant> {
    const data = await this.#transport.execute<{ updateTenant: Tenant }>(
      { operation: "updateTenant", document: UPDATE_TENANT, idempotent: true },
      { id, limits },
      opts,
    );
    return data.updateTenant;
  }
}
