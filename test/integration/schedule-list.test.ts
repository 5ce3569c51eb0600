import { describe, expect, it } from "vitest";
import { DEFAULT_BACKOFF, MAX_SCHEDULES_PER_TENANT } from "@tasklane/core";
import { createSchedule } from "@tasklane/db";
import { useGateway } from "../helpers/gateway-fixture.js";
import { createTenant, gql } from "../helpers/platform.js";

/**
 * `schedules` has no paging in the contract, so it must answer every live
 * schedule a tenant may own (MAX_SCHEDULES_PER_TENANT), and only its own.
 */
const template = { type: "tick", queue: "default", payload: null, priority: "NORMAL" as const, maxAttempts: 1, backoff: { ...DEFAULT_BACKOFF }, timeoutSeconds: 60 };

describe("the schedules query", () => {
  const platform = useGateway();

  it("lists all of a tenant's live schedules up to the cap, by name, and none of another tenant's", async () => {
    const full = await createTenant(platform.gateway);
    const other = await createTenant(platform.gateway);
    const db = platform.database.db;
    // Disabled: nothing fires, and listing must not depend on it.
    const define = (tenantId: string, name: string) =>
      createSchedule(db, tenantId, { name, cron: "0 0 1 1 *", timezone: "UTC", template, misfirePolicy: "SKIP", overlapPolicy: "ALLOW", enabled: false });
    const names = Array.from({ length: MAX_SCHEDULES_PER_TENANT }, (_, i) => `s-${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 25) await Promise.all(names.slice(i, i + 25).map((name) => define(full.tenantId, name)));
    await define(other.tenantId, "other-tenant");

    const listed = await gql<{ schedules: { name: string }[] }>(platform.gateway.url, `{ schedules { name } }`, {}, full.apiKey);
    expect(listed.errors).toBeUndefined();
    expect(listed.data?.schedules.map((s) => s.name)).toEqual(names);

    const theirs = await gql<{ schedules: { name: string }[] }>(platform.gateway.url, `{ schedules { name } }`, {}, other.apiKey);
    expect(theirs.data?.schedules.map((s) => s.name)).toEqual(["other-tenant"]);
  }, 120_000);
});
