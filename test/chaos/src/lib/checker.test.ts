import { describe, expect, it } from "vitest";
import { checkHistory } from "./checker.js";
import type { ChaosEvent } from "./history.js";

/** Hand-made histories: each proves one classification of the checker. */
const submit = (item: string, at = 0, extra: Partial<ChaosEvent> = {}): ChaosEvent => ({ kind: "submit", at, item, ...extra }) as ChaosEvent;
const start = (item: string, attempt: number, workerId: string, at: number): ChaosEvent => ({ kind: "start", at, item, attempt, generation: attempt, workerId });
const effect = (item: string, attempt: number, at: number, extra: Partial<ChaosEvent> = {}): ChaosEvent => ({ kind: "effect", at, item, attempt, ...extra }) as ChaosEvent;
const outcome = (item: string, attempt: number, result: string, at: number): ChaosEvent => ({ kind: "outcome", at, item, attempt, outcome: result });
const final = (item: string, status: string, extra: Partial<ChaosEvent> = {}): ChaosEvent => ({ kind: "final", at: 1_000, item, status, ...extra }) as ChaosEvent;
const kill = (workerId: string, at: number): ChaosEvent => ({ kind: "fault", at, fault: "kill", target: "worker", workerId });

const verdictOf = (events: ChaosEvent[], item = "a") => checkHistory(events).verdicts.find((v) => v.item === item);

describe("chaos checker", () => {
  it("classifies one side effect and SUCCEEDED as completed once", () => {
    const s = checkHistory([submit("a"), start("a", 1, "w1", 10), effect("a", 1, 20), outcome("a", 1, "SUCCEEDED", 21), final("a", "SUCCEEDED")]);
    expect(s).toMatchObject({ accepted: 1, completedOnce: 1, duplicated: 0, lost: 0, unexpected: 0 });
  });

  it("explains a duplicate whose earlier attempt's lease expired", () => {
    const events = [
      submit("a"),
      start("a", 1, "w1", 10),
      effect("a", 1, 20),
      outcome("a", 1, "LEASE_EXPIRED", 40),
      start("a", 2, "w2", 50),
      effect("a", 2, 60),
      outcome("a", 2, "SUCCEEDED", 61),
      final("a", "SUCCEEDED"),
    ];
    expect(verdictOf(events)).toMatchObject({ verdict: "duplicate", explained: true });
    expect(checkHistory(events)).toMatchObject({ duplicated: 1, duplicatesExplained: 1, lost: 0, unexpected: 0 });
  });

  it("explains a duplicate whose earlier attempt timed out, not one whose earlier attempt failed with an answer", () => {
    const after = (first: string) => [
      submit("a"),
      start("a", 1, "w1", 10),
      effect("a", 1, 20),
      outcome("a", 1, first, 1_010),
      start("a", 2, "w1", 1_050),
      effect("a", 2, 1_060),
      outcome("a", 2, "SUCCEEDED", 1_061),
      final("a", "SUCCEEDED"),
    ];
    expect(verdictOf(after("TIMED_OUT"))).toMatchObject({ verdict: "duplicate", explained: true });
    expect(verdictOf(after("FAILED"))).toMatchObject({ verdict: "duplicate", explained: false });
  });

  it("explains a duplicate whose earlier executor was killed before the later start", () => {
    const events = [submit("a"), start("a", 1, "w1", 10), effect("a", 1, 20), kill("w1", 25), start("a", 2, "w2", 50), effect("a", 2, 60), final("a", "SUCCEEDED")];
    expect(verdictOf(events)).toMatchObject({ verdict: "duplicate", explained: true });
  });

  it("does not explain a duplicate by a kill that came after the later start, nor by another worker's kill", () => {
    const lateKill = [submit("a"), start("a", 1, "w1", 10), effect("a", 1, 20), start("a", 2, "w2", 30), effect("a", 2, 40), kill("w1", 45), final("a", "SUCCEEDED")];
    expect(verdictOf(lateKill)).toMatchObject({ verdict: "duplicate", explained: false });
    const otherKill = [submit("a"), start("a", 1, "w1", 10), effect("a", 1, 20), kill("w3", 25), start("a", 2, "w2", 30), effect("a", 2, 40), final("a", "SUCCEEDED")];
    expect(verdictOf(otherKill)).toMatchObject({ verdict: "duplicate", explained: false });
  });

  it("never explains two side effects of the same attempt", () => {
    const events = [submit("a"), start("a", 1, "w1", 10), effect("a", 1, 20), kill("w1", 25), effect("a", 1, 30), final("a", "SUCCEEDED")];
    expect(verdictOf(events)).toMatchObject({ verdict: "duplicate", explained: false });
  });

  it("counts an accepted item that never reached a terminal state as lost", () => {
    const s = checkHistory([submit("a"), submit("b"), final("a", "RUNNING")]);
    expect(s).toMatchObject({ accepted: 2, lost: 2, completedOnce: 0 });
    expect(s.verdicts.map((v) => v.verdict)).toEqual(["lost", "lost"]);
  });

  it("flags the unexpected: a stray effect, a wrong terminal state, success without effect, a stale success, two tasks per key, two delivery ids", () => {
    expect(verdictOf([effect("x", 1, 5), final("x", "SUCCEEDED")], "x")).toMatchObject({ verdict: "unexpected" });
    expect(verdictOf([submit("a"), effect("a", 1, 5), final("a", "DEAD")])).toMatchObject({ verdict: "unexpected" });
    expect(verdictOf([submit("a"), final("a", "SUCCEEDED")])).toMatchObject({ verdict: "unexpected" });
    const stale = [submit("a"), start("a", 1, "w1", 1), start("a", 2, "w2", 5), effect("a", 1, 6), outcome("a", 1, "SUCCEEDED", 7), final("a", "SUCCEEDED")];
    expect(verdictOf(stale)).toMatchObject({ verdict: "unexpected" });
    expect(verdictOf([submit("k", 0, { ref: "t1" }), submit("k", 1, { ref: "t2" }), effect("k", 1, 5), final("k", "SUCCEEDED", { ref: "t1" })], "k")).toMatchObject({ verdict: "unexpected" });
    const twoIds = [submit("a"), { kind: "request", at: 2, item: "a", key: "msg_1" } as ChaosEvent, effect("a", 1, 5, { key: "msg_2" }), final("a", "SUCCEEDED")];
    expect(verdictOf(twoIds)).toMatchObject({ verdict: "unexpected" });
  });

  it("counts an expected dead-letter as such, not as a completion", () => {
    const s = checkHistory([submit("p", 0, { expect: "dead" }), start("p", 1, "w1", 1), outcome("p", 1, "TIMED_OUT", 3), final("p", "DEAD"), submit("a"), effect("a", 1, 2), final("a", "SUCCEEDED")]);
    expect(s).toMatchObject({ accepted: 2, deadLettered: 1, completedOnce: 1, unexpected: 0 });
    expect(checkHistory([submit("p", 0, { expect: "dead" }), effect("p", 1, 2), final("p", "SUCCEEDED")]).unexpected).toBe(1);
  });

  it("measures recovery from a kill to the completion of the work the killed process held", () => {
    const events = [submit("a"), start("a", 1, "w1", 100), kill("w1", 200), outcome("a", 1, "LEASE_EXPIRED", 900), start("a", 2, "w2", 950), effect("a", 2, 1_200), final("a", "SUCCEEDED")];
    expect(checkHistory(events).recoveryMs).toBe(1_000);
    const outage = [submit("a"), { kind: "fault", at: 100, fault: "restart", target: "postgres" } as ChaosEvent, { kind: "restored", at: 300, target: "postgres" } as ChaosEvent, effect("a", 1, 450), final("a", "SUCCEEDED")];
    expect(checkHistory(outage).recoveryMs).toBe(150);
    expect(checkHistory([submit("a"), effect("a", 1, 1), final("a", "SUCCEEDED")]).recoveryMs).toBeNull();
  });
});

describe("chaos checker, aliases and crashes", () => {
  it("counts effects seen under a task id for the occurrence that task ran, and explains a duplicate after a crash", () => {
    const events: ChaosEvent[] = [
      submit("sch@1"),
      { kind: "alias", at: 0, item: "task:t1", to: "sch@1" },
      { kind: "alias", at: 0, item: "task:t2", to: "sch@1" },
      effect("task:t1", 1, 5),
      final("task:t1", "SUCCEEDED", { ref: "t1" }),
    ];
    expect(checkHistory(events)).toMatchObject({ accepted: 1, completedOnce: 1, unexpected: 0 });
    // A second task for the same occurrence is never explained: one run per occurrence.
    expect(checkHistory([...events, effect("task:t2", 1, 6), final("task:t2", "SUCCEEDED", { ref: "t2" })]).unexpected).toBe(1);
    const crash = [submit("a"), start("a", 1, "p1", 1), effect("a", 1, 2), { kind: "fault", at: 3, fault: "crash", target: "pull-worker", workerId: "p1" } as ChaosEvent, start("a", 2, "p2", 4), effect("a", 2, 5), final("a", "SUCCEEDED")];
    expect(verdictOf(crash)).toMatchObject({ verdict: "duplicate", explained: true });
  });
});
