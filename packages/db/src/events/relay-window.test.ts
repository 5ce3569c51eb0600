import { describe, expect, it } from "vitest";
import { planRelayWindow, type PendingGap, type TaskEventRow, type WindowInput, type WindowRow } from "./relay-window.js";

const event = (id: number): TaskEventRow => ({
  id: String(id),
  taskId: `task_${id}`,
  tenantId: "ten_1",
  queueId: "que_1",
  workflowId: null,
  fromStatus: null,
  toStatus: "QUEUED",
  at: new Date(0),
});

/** A read answered in full (every event listened to): each row's prevId is the row before it, or the cursor. */
const read = (cursor: number, ids: number[]): WindowRow[] =>
  ids.map((id, i) => ({ id: String(id), prevId: String(i === 0 ? cursor : ids[i - 1]), event: event(id) }));

/** A row answered only to place the cursor (its tenant has no listeners). */
const marker = (id: number, prevId: number): WindowRow => ({ id: String(id), prevId: String(prevId), event: null });

const input = (over: Partial<WindowInput>): WindowInput => ({
  cursor: 10n,
  rows: [],
  snapshot: "100:105:101",
  gap: null,
  gapSettled: false,
  maxGapWaitMs: 10_000,
  nowMs: 1_000,
  ...over,
});

const ids = (rows: TaskEventRow[]) => rows.map((r) => Number(r.id));

describe("planRelayWindow", () => {
  it("publishes contiguous ids and moves the cursor to the last one", () => {
    const r = planRelayWindow(input({ rows: read(10, [11, 12, 13]) }));
    expect(ids(r.publish)).toEqual([11, 12, 13]);
    expect(r.cursor).toBe(13n);
    expect(r.gap).toBeNull();
  });

  it("stops at a hole and records it with the snapshot it was seen in", () => {
    const r = planRelayWindow(input({ rows: read(10, [11, 14, 15]) }));
    expect(ids(r.publish)).toEqual([11]);
    expect(r.cursor).toBe(11n);
    expect(r.gap).toEqual({ from: 12n, to: 13n, snapshot: "100:105:101", seenAtMs: 1_000 });
  });

  it("treats a hole right after the cursor like any other", () => {
    const r = planRelayWindow(input({ rows: read(10, [12]) }));
    expect(r.publish).toEqual([]);
    expect(r.gap).toMatchObject({ from: 11n, to: 11n });
  });

  it("waits on an unsettled hole, keeping its first observation", () => {
    const gap: PendingGap = { from: 12n, to: 13n, snapshot: "old", seenAtMs: 900 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [14]), gap, nowMs: 2_000 }));
    expect(r.publish).toEqual([]);
    expect(r.cursor).toBe(11n);
    expect(r.gap).toBe(gap);
  });

  it("publishes the late rows in order once the hole fills in", () => {
    const gap: PendingGap = { from: 12n, to: 13n, snapshot: "old", seenAtMs: 900 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [12, 13, 14]), gap }));
    expect(ids(r.publish)).toEqual([12, 13, 14]);
    expect(r.gap).toBeNull();
  });

  it("steps over a settled hole (a rollback) and goes on", () => {
    const gap: PendingGap = { from: 12n, to: 13n, snapshot: "old", seenAtMs: 900 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [14, 15]), gap, gapSettled: true }));
    expect(ids(r.publish)).toEqual([14, 15]);
    expect(r.cursor).toBe(15n);
    expect(r.skipped).toEqual([{ from: 12n, to: 13n, forced: false }]);
  });

  it("applies a settled observation to what is left of a partly filled hole", () => {
    const gap: PendingGap = { from: 12n, to: 14n, snapshot: "old", seenAtMs: 900 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [12, 15]), gap, gapSettled: true }));
    expect(ids(r.publish)).toEqual([12, 15]);
    expect(r.skipped).toEqual([{ from: 13n, to: 14n, forced: false }]);
  });

  it("records a new hole beyond a settled one instead of stepping over it", () => {
    const gap: PendingGap = { from: 12n, to: 12n, snapshot: "old", seenAtMs: 900 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [13, 15]), gap, gapSettled: true, snapshot: "new" }));
    expect(ids(r.publish)).toEqual([13]);
    expect(r.gap).toEqual({ from: 14n, to: 14n, snapshot: "new", seenAtMs: 1_000 });
  });

  it("does not trust an observation that does not cover the hole", () => {
    const gap: PendingGap = { from: 12n, to: 12n, snapshot: "old", seenAtMs: 0 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [14]), gap, gapSettled: true, snapshot: "new" }));
    expect(r.publish).toEqual([]);
    expect(r.gap).toMatchObject({ from: 12n, to: 13n, snapshot: "new" });
  });

  it("steps over an unsettled hole after the stall guard, and says so", () => {
    const gap: PendingGap = { from: 12n, to: 12n, snapshot: "old", seenAtMs: 0 };
    const r = planRelayWindow(input({ cursor: 11n, rows: read(11, [13]), gap, nowMs: 10_000 }));
    expect(ids(r.publish)).toEqual([13]);
    expect(r.skipped).toEqual([{ from: 12n, to: 12n, forced: true }]);
  });

  it("walks over events nobody listens to, publishing only the listened ones, to the window's last row", () => {
    // Read 11..20; only 13 is listened to; 20 is answered as the window's last row.
    const r = planRelayWindow(input({ rows: [{ ...marker(13, 12), event: event(13) }, marker(20, 19)] }));
    expect(ids(r.publish)).toEqual([13]);
    expect(r.cursor).toBe(20n);
    expect(r.gap).toBeNull();
  });

  it("stops at a hole between events nobody listens to, after the ids read before it", () => {
    // Read 11, 12, 15, 16: 15 is answered because a hole precedes it, 16 as the last row.
    const r = planRelayWindow(input({ rows: [marker(15, 12), marker(16, 15)] }));
    expect(r.publish).toEqual([]);
    expect(r.cursor).toBe(12n);
    expect(r.gap).toMatchObject({ from: 13n, to: 14n });
  });

  it("steps over a settled hole between events nobody listens to", () => {
    const gap: PendingGap = { from: 13n, to: 14n, snapshot: "old", seenAtMs: 900 };
    const r = planRelayWindow(input({ cursor: 12n, rows: [marker(15, 12), { ...marker(16, 15), event: event(16) }], gap, gapSettled: true }));
    expect(ids(r.publish)).toEqual([16]);
    expect(r.cursor).toBe(16n);
    expect(r.skipped).toEqual([{ from: 13n, to: 14n, forced: false }]);
  });
});
