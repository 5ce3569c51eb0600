/**
 * A triggered run is one of the schedule's runs for its overlap policy: under
 * QUEUE it never runs beside a cron run, nor a cron run beside it.
 */
import { describe, expect, it } from "vitest";
import { fireDueSchedules } from "@tasklane/db";
import { useGateway } from "../helpers/gateway-fixture.js";
import { codeOf, createTenant, gql } from "../helpers/platform.js";

const CREATE = `mutation ($i: CreateScheduleInput!) { createSchedule(input: $i) { id } }`;
const TRIGGER = `mutation ($id: ID!) { triggerSchedule(id: $id) { id } }`;
const LEASE = `mutation { leaseTasks(queue: "default", workerId: "w", max: 10) { task { id } leaseToken } }`;
const COMPLETE = `mutation ($id: ID!, $t: String!) { completeTask(taskId: $id, leaseToken: $t) { status } }`;

describe("triggerSchedule under overlapPolicy QUEUE", () => {
  const platform = useGateway();

  it("runs after the cron run before it, and the cron run after it waits for it", async () => {
    const { apiKey } = await createTenant(platform.gateway);
    const call = async <T>(query: string, variables: Record<string, unknown> = {}) => {
      const res = await gql<T>(platform.gateway.url, query, variables, apiKey);
      expect(codeOf(res)).toBeUndefined();
      return res.data as T;
    };
    const { createSchedule } = await call<{ createSchedule: { id: string } }>(CREATE, {
      i: { name: "serial", cron: "0 3 * * *", overlapPolicy: "QUEUE", task: { type: "t" } },
    });
    const id = createSchedule.id;
    // Two distinct occurrences, both a moment ago (on time).
    const fireOccurrence = async (secondsAgo: number) => {
      await platform.database.db.pool.query(`UPDATE schedules SET next_run_at = date_trunc('second', now()) - $2 * interval '1 second' WHERE id = $1`, [id, secondsAgo]);
      await fireDueSchedules(platform.database.db, { lookaheadMs: 0, horizonMs: 60_000, limit: 100 });
    };
    const lease = async () => (await call<{ leaseTasks: { task: { id: string }; leaseToken: string }[] }>(LEASE)).leaseTasks;

    // A cron run is leased (running); a trigger meanwhile waits for it.
    await fireOccurrence(2);
    const [cronRun, ...othersWithCron] = await lease();
    expect(othersWithCron).toEqual([]);
    const { triggerSchedule } = await call<{ triggerSchedule: { id: string } }>(TRIGGER, { id });
    expect(await lease()).toEqual([]);
    await call(COMPLETE, { id: cronRun!.task.id, t: cronRun!.leaseToken });
    const [triggered, ...othersWithTriggered] = await lease();
    expect(triggered?.task.id).toBe(triggerSchedule.id);
    expect(othersWithTriggered).toEqual([]);

    // The triggered run is running; the next cron occurrence waits for it.
    await fireOccurrence(1);
    expect(await lease()).toEqual([]);
    await call(COMPLETE, { id: triggered!.task.id, t: triggered!.leaseToken });
    expect(await lease()).toHaveLength(1);
  });
});
