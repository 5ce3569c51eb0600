import { describe, expect, it } from "vitest";
import { ApiKeyScope, Permission, hasPermission, knownScopes } from "./scopes.js";

describe("API key scopes", () => {
  it("grants each scope exactly its permissions", () => {
    const table = Object.fromEntries(
      Object.values(ApiKeyScope).map((s) => [s, Object.values(Permission).filter((p) => hasPermission([s], p))]),
    );
    expect(table).toEqual({
      full: ["READ", "SUBMIT", "WORK", "MANAGE"],
      submit: ["READ", "SUBMIT"],
      worker: ["READ", "WORK"],
      read: ["READ"],
    });
  });

  it("ignores stored strings that are not scopes", () => {
    expect(knownScopes(["read", "admin", "FULL"])).toEqual(["read"]);
    expect(hasPermission(knownScopes(["admin"]), Permission.READ)).toBe(false);
  });
});
