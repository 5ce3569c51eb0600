import { describe, expect, it } from "vitest";
import { splitApiKeys } from "./api-key-kinds";

const NOW = Date.parse("2026-11-29T12:00:00Z");
const key = (name: string, expiresAt: string | null, revokedAt: string | null = null) => ({ name, expiresAt, revokedAt });

describe("splitApiKeys", () => {
  it("lists a user's key named like a console session among the keys", () => {
    const { keys, sessions } = splitApiKeys([key("console session nightly-export", null), key("ci-deployer", null)], NOW);
    expect(keys.map((k) => k.name)).toEqual(["console session nightly-export", "ci-deployer"]);
    expect(sessions).toEqual([]);
  });

  it("tells console sessions by their expiry, and shows only those still working", () => {
    const { keys, sessions } = splitApiKeys(
      [
        key("console session ada@example.com", "2026-11-29T20:00:00Z"),
        key("console session old@example.com", "2026-11-29T11:00:00Z"),
        key("console session gone@example.com", "2026-11-29T20:00:00Z", "2026-11-29T10:00:00Z"),
        key("revoked service key", null, "2026-11-29T10:00:00Z"),
      ],
      NOW,
    );
    expect(sessions.map((k) => k.name)).toEqual(["console session ada@example.com"]);
    expect(keys.map((k) => k.name)).toEqual(["revoked service key"]);
  });
});
