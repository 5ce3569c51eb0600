/**
 * A schedule change fires the occurrences already due (the scheduler had not
 * reached them) as the scheduler would: with SCHEDULE_MISFIRE_GRACE_SECONDS
 * as the gateway was given it, not the default 30 s.
 */
import { describe, expect, it } from "vitest";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";

const CREATE = `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`;
const UPDATE = `mutation ($id: ID!, $i: UpdateScheduleInput!) { updateSchedule(id: $id, input: $i) { version } }`;

describe("updateSchedule and SCHEDULE_MISFIRE_GRACE_SECONDS", () => {
  const platform = useGateway({ env: { SCHEDULE_MISFIRE_GRACE_SECONDS: "600" } });

  it("runs the occurrences a minute late that the scheduler, under the same grace, would have run", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const created = await gql<{ createSchedule: { id: string } }>(platform.gateway.url, CREATE, { i: { name: "every-10s", cron: "*/10 * * * * *", task: { type: "t" } } }, apiKey);
    expect(codeOf(created)).toBeUndefined();
    const id = created.data!.createSchedule.id;
    // No scheduler ran for the last minute: six occurrences due, 0 to 60 s late.
    await platform.database.db.pool.query(
      `UPDATE schedules SET next_run_at = to_timestamp(floor(extract(epoch FROM now()) / 10) * 10) - interval '50 seconds' WHERE id = $1`,
      [id],
    );
    expect(codeOf(await gql(platform.gateway.url, UPDATE, { id, i: { task: { type: "t2" } } }, apiKey))).toBeUndefined();
    const runs = await platform.database.db.pool.query<{ status: string; type: string }>(`SELECT status, type FROM tasks WHERE schedule_id = $1 ORDER BY run_at`, [id]);
    expect(runs.rows.length).toBeGreaterThanOrEqual(6);
    // Every one due before the change ran as the old version said.
    expect(runs.rows.map((r) => [r.status, r.type])).toEqual(runs.rows.map(() => ["QUEUED", "t"]));
  });
});
