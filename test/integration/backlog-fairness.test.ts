/**
 * The platform's backlog cap (GLOBAL_MAX_PENDING_TASKS) refuses first the
 * tenant whose flood filled it: another tenant's next submission is still
 * admitted, up to a margin past the cap, after which everyone is refused.
 */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";

const SUBMIT = `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`;

describe("the platform backlog cap", () => {
  const platform = useGateway();

  it("refuses the tenant holding the backlog and admits another one's tasks up to the ceiling", async () => {
    const pending = async () =>
      Number((await platform.database.db.pool.query<{ n: string }>("SELECT coalesce(sum(pending), 0)::text AS n FROM tenant_counters")).rows[0]?.n);
    const before = await pending();
    // A's 100 tasks fill the cap and are far more than a tenth of it; the ceiling is 10% above it, beyond
    // the few A's probes below add before the guard's next read (once a second).
    const cap = before + 100;
    const ceiling = Math.floor(cap * 1.1);
    const capped = await platform.startAnother({ env: { GLOBAL_MAX_PENDING_TASKS: String(cap) } });
    const a = await createTenant(capped, "flood");
    const b = await createTenant(capped, "trickle");
    const submit = (apiKey: string, n: number) => gql(capped.url, SUBMIT, { i: Array.from({ length: n }, () => ({ type: "t" })) }, apiKey);
    expect(codeOf(await submit(a.apiKey, 100))).toBeUndefined();
    await waitFor(async () => codeOf(await submit(a.apiKey, 1)) === "OVERLOADED", 5_000, 200);

    // B is admitted while A is refused.
    expect(codeOf(await submit(b.apiKey, 1))).toBeUndefined();
    expect(codeOf(await submit(a.apiKey, 1))).toBe("OVERLOADED");

    // Up to the ceiling, then B too is refused.
    const room = ceiling - (await pending());
    expect(room).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1_200));
    expect(codeOf(await submit(b.apiKey, room + 1))).toBe("OVERLOADED");
    expect(codeOf(await submit(b.apiKey, room))).toBeUndefined();
    await new Promise((r) => setTimeout(r, 1_200));
    expect(codeOf(await submit(b.apiKey, 1))).toBe("OVERLOADED");
    expect(await pending()).toBe(ceiling);
  });
});
