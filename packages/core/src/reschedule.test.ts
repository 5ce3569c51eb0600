import { describe, expect, it } from "vitest";
import { RESCHEDULABLE_STATUSES, isReschedulable, rescheduleOutcome } from "./reschedule.js";
import { TaskStatus } from "./statuses.js";
import { canTransition } from "./task-state-machine.js";

describe("rescheduleTask's rule", () => {
  it("takes only tasks waiting for their next attempt with nothing running", () => {
    expect([...RESCHEDULABLE_STATUSES].sort()).toEqual(["QUEUED", "RETRYING", "SCHEDULED"]);
    for (const s of Object.values(TaskStatus)) expect(isReschedulable(s), s).toBe(s === "SCHEDULED" || s === "QUEUED" || s === "RETRYING");
  });

  it.each([
    ["SCHEDULED", true, "QUEUED", "promote"],
    ["SCHEDULED", false, "SCHEDULED", null],
    ["QUEUED", true, "QUEUED", null],
    ["QUEUED", false, "SCHEDULED", "reschedule"],
    ["RETRYING", true, "QUEUED", "retryDue"],
    ["RETRYING", false, "RETRYING", null],
  ] as const)("%s due=%s: %s by %s", (from, due, status, transition) => {
    expect(rescheduleOutcome(from, due)).toEqual({ status, transition });
  });

  it("every status change it makes is a legal transition of the state machine", () => {
    for (const from of RESCHEDULABLE_STATUSES) {
      for (const due of [true, false]) {
        const { status, transition } = rescheduleOutcome(from, due);
        if (transition === null) expect(status).toBe(from);
        else expect(canTransition(transition, from, status), `${transition}:${from}->${status}`).toBe(true);
      }
    }
  });

  it("refuses the statuses it does not take", () => {
    for (const s of ["BLOCKED", "RUNNING", "SUCCEEDED", "DEAD", "CANCELLED", "SKIPPED"] as const) {
      expect(() => rescheduleOutcome(s, true)).toThrow(/not rescheduled/);
    }
  });
});
