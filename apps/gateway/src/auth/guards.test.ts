import { ErrorCode, ForbiddenError } from "@tasklane/core";
import { describe, expect, it } from "vitest";
import { requireTenant } from "./guards.js";
import type { TenantPrincipal } from "./principal.js";
import { ApiKeyScope, Permission, type ApiKeyScope as Scope } from "./scopes.js";

const keyWith = (...scopes: Scope[]): TenantPrincipal => ({ kind: "tenant", tenantId: "ten_1", apiKeyId: "key_1", scopes });

function refusal(principal: TenantPrincipal, permission: Permission): ForbiddenError {
  try {
    requireTenant(principal, permission);
  } catch (error: unknown) {
    if (error instanceof ForbiddenError) return error;
    throw error;
  }
  throw new Error(`expected ${permission} to be refused for ${principal.scopes.join(",")}`);
}

describe("requireTenant", () => {
  it("names the scopes that would allow a refused operation, not the internal permission", () => {
    const work = refusal(keyWith(ApiKeyScope.read), Permission.WORK);
    expect(work.code).toBe(ErrorCode.FORBIDDEN);
    expect(work.message).toBe("This operation needs an API key with scope full or worker; this key has read");
    expect(work.extensions).toEqual({ requiredPermission: "WORK", allowedScopes: ["full", "worker"] });

    const manage = refusal(keyWith(ApiKeyScope.submit, ApiKeyScope.worker), Permission.MANAGE);
    expect(manage.message).toBe("This operation needs an API key with scope full; this key has submit, worker");
    expect(manage.extensions).toEqual({ requiredPermission: "MANAGE", allowedScopes: ["full"] });

    const submit = refusal(keyWith(), Permission.SUBMIT);
    expect(submit.message).toBe("This operation needs an API key with scope full or submit; this key has none");
    expect(submit.extensions).toEqual({ requiredPermission: "SUBMIT", allowedScopes: ["full", "submit"] });
  });

  it("lets a key through with any scope that grants the permission", () => {
    const principal = keyWith(ApiKeyScope.worker);
    expect(requireTenant(principal, Permission.WORK)).toBe(principal);
    expect(requireTenant(principal, Permission.READ)).toBe(principal);
  });
});
