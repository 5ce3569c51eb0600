/**
 * triggerSchedule is a submission: the platform backlog cap
 * (GLOBAL_MAX_PENDING_TASKS) refuses it as it refuses submitTask, and
 * nothing is written.
 */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql, waitFor } from "../helpers/platform.js";

const SUBMIT = `mutation ($i: [SubmitTaskInput!]!) { submitTasks(inputs: $i) { id } }`;
const CREATE = `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`;
const TRIGGER = `mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`;

describe("triggerSchedule and the platform backlog cap", () => {
  const platform = useGateway();

  it("is refused OVERLOADED while the tenant's flood holds the backlog, writing no run", async () => {
    const pending = async () =>
      Number((await platform.database.db.pool.query<{ n: string }>("SELECT coalesce(sum(pending), 0)::text AS n FROM tenant_counters")).rows[0]?.n);
    const cap = (await pending()) + 50;
    const capped = await platform.startAnother({ env: { GLOBAL_MAX_PENDING_TASKS: String(cap) } });
    const a = await createTenant(capped, "flood");
    const created = await gql<{ createSchedule: { id: string } }>(capped.url, CREATE, { i: { name: "nightly", cron: "0 3 * * *", task: { type: "t" } } }, a.apiKey);
    expect(codeOf(created)).toBeUndefined();
    const scheduleId = created.data!.createSchedule.id;
    // Below the cap a trigger runs; with it, 49 more tasks fill the cap.
    expect(codeOf(await gql(capped.url, TRIGGER, { id: scheduleId }, a.apiKey))).toBeUndefined();

    expect(codeOf(await gql(capped.url, SUBMIT, { i: Array.from({ length: 49 }, () => ({ type: "t" })) }, a.apiKey))).toBeUndefined();
    await waitFor(async () => codeOf(await gql(capped.url, SUBMIT, { i: [{ type: "t" }] }, a.apiKey)) === "OVERLOADED", 5_000, 200);

    const runs = async () => Number((await platform.database.db.pool.query<{ n: string }>("SELECT count(*)::text AS n FROM tasks WHERE schedule_id = $1", [scheduleId])).rows[0]?.n);
    const before = await runs();
    const triggered = await gql(capped.url, TRIGGER, { id: scheduleId }, a.apiKey);
    expect(codeOf(triggered)).toBe("OVERLOADED");
    expect(await runs()).toBe(before);
  });
});
