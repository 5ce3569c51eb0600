/**
 * The chaos checker: a pure function from a history to a verdict. It knows
 * nothing about processes or databases; everything it judges was recorded
 * as an event (history.ts).
 *
 * Every accepted item is exactly one of:
 * - once: reached its expected terminal state with exactly one side effect;
 * - duplicate: expected state, more than one side effect; "explained" when
 *   every extra effect follows an earlier attempt whose lease expired or
 *   whose request timed out (the worker stopped waiting; the endpoint may
 *   still have done the work, and the contract retries timeouts), or whose
 *   executing process was killed or stopped before the later attempt started
 *   (the only duplicates the platform allows);
 * - lost: no terminal state by the end of the run;
 * - unexpected: anything else (wrong terminal state, completed without a side
 *   effect, a stale outcome accepted, two tasks for one idempotency key, two
 *   delivery ids for one event, a side effect repeated within one attempt).
 * Side effects for items never accepted count as unexpected too.
 */
import type { ChaosEvent, EffectEvent, FaultEvent, OutcomeEvent, StartEvent, SubmitEvent } from "./history.js";

export type Verdict = "once" | "duplicate" | "lost" | "unexpected";

export interface ItemVerdict {
  item: string;
  verdict: Verdict;
  /** For duplicates: whether every extra effect is explained. */
  explained?: boolean;
  reason?: string;
}

export interface CheckSummary {
  accepted: number;
  completedOnce: number;
  duplicated: number;
  duplicatesExplained: number;
  /** Items that reached DEAD as their expected outcome (poison). */
  deadLettered: number;
  lost: number;
  unexpected: number;
  /** Longest time from a fault (or an outage's end) until the work it disturbed was done; null without faults. */
  recoveryMs: number | null;
  verdicts: ItemVerdict[];
}

const TERMINAL = new Set(["SUCCEEDED", "DEAD", "CANCELLED", "SKIPPED"]);
/** Faults that interrupt the executing process (a crash is a poison task killing its own worker). */
const STOPPING_FAULTS = new Set(["kill", "stop", "crash"]);

interface ItemFacts {
  submits: SubmitEvent[];
  starts: StartEvent[];
  effects: EffectEvent[];
  outcomes: OutcomeEvent[];
  keys: Set<string>;
  finals: { status: string; ref?: string }[];
}

function emptyFacts(): ItemFacts {
  return { submits: [], starts: [], effects: [], outcomes: [], keys: new Set(), finals: [] };
}

function collect(events: readonly ChaosEvent[]): { items: Map<string, ItemFacts>; faults: FaultEvent[] } {
  const items = new Map<string, ItemFacts>();
  const faults: FaultEvent[] = [];
  const aliases = new Map(events.flatMap((e) => (e.kind === "alias" ? [[e.item, e.to] as const] : [])));
  const facts = (name: string) => {
    const item = aliases.get(name) ?? name;
    let f = items.get(item);
    if (!f) items.set(item, (f = emptyFacts()));
    return f;
  };
  for (const e of events) {
    switch (e.kind) {
      case "submit":
        facts(e.item).submits.push(e);
        break;
      case "start":
        facts(e.item).starts.push(e);
        break;
      case "effect":
        facts(e.item).effects.push(e);
        if (e.key !== undefined) facts(e.item).keys.add(e.key);
        break;
      case "request":
        if (e.key !== undefined) facts(e.item).keys.add(e.key);
        break;
      case "outcome":
        facts(e.item).outcomes.push(e);
        break;
      case "final":
        facts(e.item).finals.push({ status: e.status, ...(e.ref !== undefined ? { ref: e.ref } : {}) });
        break;
      case "fault":
        faults.push(e);
        break;
      case "heartbeat":
      case "refused":
      case "restored":
      case "alias":
        break;
    }
  }
  return { items, faults };
}

/** The worker that ran `attempt`: named on the effect, else on the start or outcome of that attempt. */
function executorOf(f: ItemFacts, effect: EffectEvent): string | undefined {
  return (
    effect.workerId ??
    f.starts.find((s) => s.attempt === effect.attempt)?.workerId ??
    f.outcomes.find((o) => o.attempt === effect.attempt)?.workerId
  );
}

/**
 * Outcomes after which the platform cannot know whether the endpoint did the work: a lease that
 * expired, and a request that timed out (on a loaded machine a 40 ms endpoint can answer after a
 * 1 s timeout, as a chaos run inside a full `npm test` showed).
 */
const AMBIGUOUS_OUTCOMES = new Set(["LEASE_EXPIRED", "TIMED_OUT"]);

/** An extra effect is explained by an earlier attempt that ended ambiguously or whose process was killed/stopped before this attempt began. */
function isExplained(f: ItemFacts, earlier: EffectEvent[], later: EffectEvent, faults: readonly FaultEvent[]): boolean {
  const laterStart = f.starts.find((s) => s.attempt === later.attempt)?.at ?? later.at;
  return earlier.some((prev) => {
    if (prev.attempt >= later.attempt) return false;
    if (f.outcomes.some((o) => o.attempt === prev.attempt && AMBIGUOUS_OUTCOMES.has(o.outcome))) return true;
    const executor = executorOf(f, prev);
    return executor !== undefined && faults.some((x) => STOPPING_FAULTS.has(x.fault) && x.workerId === executor && x.at <= laterStart);
  });
}

function judge(item: string, f: ItemFacts, faults: readonly FaultEvent[]): ItemVerdict {
  const unexpected = (reason: string): ItemVerdict => ({ item, verdict: "unexpected", reason });
  if (f.submits.length === 0) return unexpected("side effect or task for an item never accepted");
  const refs = new Set([...f.submits, ...f.finals].flatMap((x) => (x.ref !== undefined ? [x.ref] : [])));
  if (refs.size > 1) return unexpected(`one item answered with ${refs.size} different tasks`);
  if (f.keys.size > 1) return unexpected(`${f.keys.size} different delivery ids for one event`);
  const expect = f.submits.some((s) => s.expect === "dead") ? "DEAD" : "SUCCEEDED";
  const final = f.finals[0]?.status;
  if (final === undefined || !TERMINAL.has(final)) return { item, verdict: "lost", reason: `ended ${final ?? "missing"}` };
  if (final !== expect) return unexpected(`ended ${final}, expected ${expect}`);
  // A succeeded attempt older than a later lease means a stale outcome won over the newer attempt.
  const newestStart = Math.max(0, ...f.starts.map((s) => s.attempt));
  const stale = f.outcomes.find((o) => o.outcome === "SUCCEEDED" && o.attempt < newestStart);
  if (stale) return unexpected(`stale attempt ${stale.attempt} recorded as the success over attempt ${newestStart}`);
  if (expect === "DEAD") return { item, verdict: "once" };
  if (f.effects.length === 0) return unexpected("SUCCEEDED without a side effect");
  if (f.effects.length === 1) return { item, verdict: "once" };
  const sorted = [...f.effects].sort((a, b) => a.attempt - b.attempt || a.at - b.at);
  const explained = sorted.slice(1).every((later, i) => isExplained(f, sorted.slice(0, i + 1), later, faults));
  return { item, verdict: "duplicate", explained };
}

/** Work a fault disturbed: items an affected process had started and whose attempt there did not succeed. */
function recoveryOf(items: Map<string, ItemFacts>, faults: readonly FaultEvent[], events: readonly ChaosEvent[]): number | null {
  const restored = events.filter((e) => e.kind === "restored");
  const effectTimes = events.filter((e): e is EffectEvent => e.kind === "effect").map((e) => e.at).sort((a, b) => a - b);
  const nextEffectAfter = (t: number) => effectTimes.find((x) => x >= t);
  let worst: number | null = null;
  const consider = (ms: number | undefined) => {
    if (ms !== undefined && (worst === null || ms > worst)) worst = ms;
  };
  for (const fault of faults) {
    let disturbedDone: number | undefined;
    if (fault.workerId !== undefined) {
      for (const f of items.values()) {
        const hit = f.starts.some((s) => s.workerId === fault.workerId && s.at <= fault.at && !f.outcomes.some((o) => o.attempt === s.attempt && o.outcome === "SUCCEEDED"));
        if (!hit) continue;
        const done = Math.max(...f.effects.map((e) => e.at).filter((t) => t >= fault.at), Number.NEGATIVE_INFINITY);
        if (Number.isFinite(done) && (disturbedDone === undefined || done > disturbedDone)) disturbedDone = done;
      }
    }
    if (disturbedDone !== undefined) consider(disturbedDone - fault.at);
    else if (!restored.some((r) => r.target === fault.target && r.at >= fault.at)) {
      const next = nextEffectAfter(fault.at);
      consider(next === undefined ? undefined : next - fault.at);
    }
  }
  for (const r of restored) {
    const next = nextEffectAfter(r.at);
    consider(next === undefined ? undefined : next - r.at);
  }
  return worst;
}

export function checkHistory(events: readonly ChaosEvent[]): CheckSummary {
  const { items, faults } = collect(events);
  const verdicts = [...items.entries()].map(([item, f]) => judge(item, f, faults));
  const accepted = [...items.values()].filter((f) => f.submits.length > 0).length;
  const count = (pred: (v: ItemVerdict) => boolean) => verdicts.filter(pred).length;
  const deadLettered = count((v) => v.verdict === "once" && (items.get(v.item)?.submits.some((s) => s.expect === "dead") ?? false));
  return {
    accepted,
    completedOnce: count((v) => v.verdict === "once") - deadLettered,
    duplicated: count((v) => v.verdict === "duplicate"),
    duplicatesExplained: count((v) => v.verdict === "duplicate" && v.explained === true),
    deadLettered,
    lost: count((v) => v.verdict === "lost"),
    unexpected: count((v) => v.verdict === "unexpected"),
    recoveryMs: recoveryOf(items, faults, events),
    verdicts,
  };
}

/** The verdicts a report should show in full (everything that is not a clean single completion). */
export function problems(summary: CheckSummary, limit = 20): ItemVerdict[] {
  return summary.verdicts.filter((v) => v.verdict === "lost" || v.verdict === "unexpected" || (v.verdict === "duplicate" && !v.explained)).slice(0, limit);
}
