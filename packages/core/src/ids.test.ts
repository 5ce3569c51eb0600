import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  IdPrefix,
  apiKeyPrefixOf,
  hashSecret,
  isWellFormedId,
  newApiKeySecret,
  newId,
  newLeaseToken,
  parseLeaseToken,
  safeEqualHex,
} from "./ids.js";

describe("newId / isWellFormedId", () => {
  it.each(Object.values(IdPrefix))("%s ids are well formed for their own prefix only", (prefix) => {
    const id = newId(prefix);
    expect(id).toMatch(new RegExp(`^${prefix}_[0-9a-f]{32}$`));
    expect(isWellFormedId(prefix, id)).toBe(true);
    const other = prefix === "task" ? "ten" : "task";
    expect(isWellFormedId(other, id)).toBe(false);
  });

  it("sort by creation time", async () => {
    const a = newId("task");
    await new Promise((r) => setTimeout(r, 2));
    const b = newId("task");
    expect(a < b).toBe(true);
  });

  it("refuses near misses", () => {
    const id = newId("task");
    for (const bad of [
      id.toUpperCase(),
      `${id}0`,
      id.slice(0, -1),
      ` ${id}`,
      id.replace("task_", "task-"),
      "task_" + "0".repeat(32), // not a v7 uuid
      "task_01890a5d-ac96-774b-bcce-b302099a8057",
      "",
    ]) {
      expect(isWellFormedId("task", bad), bad).toBe(false);
    }
  });
});

describe("lease tokens", () => {
  it("round-trip the generation and differ every time", () => {
    const a = newLeaseToken("task_x", 7);
    const b = newLeaseToken("task_x", 7);
    expect(a).toMatch(/^lt_7_[A-Za-z0-9_-]{22}$/);
    expect(a).not.toBe(b);
    expect(parseLeaseToken(a)).toEqual({ generation: 7 });
    expect(parseLeaseToken(newLeaseToken("task_x", 0))).toEqual({ generation: 0 });
  });

  it("refuse garbage", () => {
    for (const bad of ["", "lt_", "lt_x_AAAAAAAAAAAAAAAAAAAAAA", "lt_1_short", "xx_1_AAAAAAAAAAAAAAAAAAAAAA", "lt_-1_AAAAAAAAAAAAAAAAAAAAAA"]) {
      expect(parseLeaseToken(bad), bad).toBeNull();
    }
    expect(() => newLeaseToken("t", -1)).toThrow(RangeError);
    expect(() => newLeaseToken("t", 1.5)).toThrow(RangeError);
  });
});

describe("API key secrets", () => {
  it("have a public prefix and a random tail", () => {
    const { secret, prefix } = newApiKeySecret();
    expect(prefix).toMatch(/^tl_[a-z0-9]{8}$/);
    expect(secret.startsWith(`${prefix}_`)).toBe(true);
    expect(Buffer.from(secret.slice(prefix.length + 1), "base64url")).toHaveLength(32);
    expect(apiKeyPrefixOf(secret)).toBe(prefix);
    expect(newApiKeySecret().secret).not.toBe(secret);
  });

  it("apiKeyPrefixOf refuses other shapes", () => {
    expect(apiKeyPrefixOf("Bearer x")).toBeNull();
    expect(apiKeyPrefixOf(`tl_ABCDEFGH_${"a".repeat(43)}`)).toBeNull();
  });

  it("hashSecret is sha256 hex", () => {
    expect(hashSecret("abc")).toBe(createHash("sha256").update("abc").digest("hex"));
    expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("safeEqualHex compares digests", () => {
    const h = hashSecret("x");
    expect(safeEqualHex(h, h)).toBe(true);
    expect(safeEqualHex(h, h.toUpperCase())).toBe(true);
    expect(safeEqualHex(h, hashSecret("y"))).toBe(false);
    expect(safeEqualHex(h, h.slice(2))).toBe(false);
    expect(safeEqualHex("zz", "zz")).toBe(false);
    expect(safeEqualHex("abc", "abc")).toBe(false);
  });
});
