import type { LookupAddress } from "node:dns";
import { describe, expect, it } from "vitest";
import { PrivateTargetError, guardedLookup } from "./outbound-agent.js";

/** localhost resolves to loopback through /etc/hosts, so no network is needed. */
function resolve(allowPrivate: boolean): Promise<{ error: Error | null; address: string | LookupAddress[] }> {
  return new Promise((done) => {
    guardedLookup(allowPrivate)("localhost", { all: false }, (error, address) => done({ error, address }));
  });
}

describe("guardedLookup", () => {
  it("refuses a name that resolves to a private address at connect time", async () => {
    const { error } = await resolve(false);
    expect(error).toBeInstanceOf(PrivateTargetError);
  });

  it("lets it through when private targets are allowed", async () => {
    const { error, address } = await resolve(true);
    expect(error).toBeNull();
    expect(typeof address).toBe("string");
  });
});
