/**
 * The chaos history: an append-only list of timestamped events, written as
 * JSONL next to the report so a run can be re-checked or read afterwards.
 * The checker (checker.ts) only ever sees this list.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** A task (or, for schedules and idempotency keys, an occurrence or key) the platform acknowledged. */
export interface SubmitEvent {
  kind: "submit";
  at: number;
  item: string;
  /** The task id the client was given (for keys: several answers must name one task). */
  ref?: string;
  /** Poison items are expected to end DEAD; everything else SUCCEEDED. */
  expect?: "succeed" | "dead";
}
/** An attempt started under a lease (its fencing generation). */
export interface StartEvent {
  kind: "start";
  at: number;
  item: string;
  attempt: number;
  generation: number;
  workerId: string;
}
export interface HeartbeatEvent {
  kind: "heartbeat";
  at: number;
  item: string;
  generation: number;
  accepted: boolean;
}
/** The side effect observed at the endpoint: the work was done (2xx answered, or a pull handler returned). */
export interface EffectEvent {
  kind: "effect";
  at: number;
  item: string;
  attempt: number;
  workerId?: string;
  /** A delivery key that must stay the same across retries (webhook-id). */
  key?: string;
}
/** A request the endpoint refused or that failed (not an effect), kept for the key check. */
export interface RequestEvent {
  kind: "request";
  at: number;
  item: string;
  key?: string;
}
/** An attempt's recorded outcome (from the attempts table). */
export interface OutcomeEvent {
  kind: "outcome";
  at: number;
  item: string;
  attempt: number;
  outcome: string;
  workerId?: string;
}
/** An outcome the platform refused because its lease was stale. */
export interface RefusedEvent {
  kind: "refused";
  at: number;
  item: string;
  generation: number;
}
/** The item's state at the end of the run. */
export interface FinalEvent {
  kind: "final";
  at: number;
  item: string;
  status: string;
  ref?: string;
}
/** A fault injected by the suite; `workerId` names the killed/stopped executor when there is one. */
export interface FaultEvent {
  kind: "fault";
  at: number;
  fault: string;
  target: string;
  workerId?: string;
}
/** The end of an outage (service back, process resumed): recovery is measured from here. */
export interface RestoredEvent {
  kind: "restored";
  at: number;
  target: string;
}

/** Names an item by another name: effects seen under a task id belong to the occurrence that task ran. */
export interface AliasEvent {
  kind: "alias";
  at: number;
  item: string;
  to: string;
}

export type ChaosEvent =
  | AliasEvent
  | SubmitEvent
  | StartEvent
  | HeartbeatEvent
  | EffectEvent
  | RequestEvent
  | OutcomeEvent
  | RefusedEvent
  | FinalEvent
  | FaultEvent
  | RestoredEvent;

/** Distributes over the union so each variant keeps its own fields. */
type WithoutAt<E> = E extends ChaosEvent ? Omit<E, "at"> & { at?: number } : never;

export class History {
  readonly events: ChaosEvent[] = [];
  private pending: string[] = [];

  constructor(private readonly file?: string) {
    if (file) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, "");
    }
  }

  record(event: WithoutAt<ChaosEvent>): void {
    const full = { ...event, at: event.at ?? Date.now() } as ChaosEvent;
    this.events.push(full);
    if (!this.file) return;
    this.pending.push(JSON.stringify(full));
    // Written in batches: tens of thousands of synchronous appends would slow the run being measured.
    if (this.pending.length >= 2_000) this.flush();
  }

  flush(): void {
    if (!this.file || this.pending.length === 0) return;
    appendFileSync(this.file, `${this.pending.join("\n")}\n`);
    this.pending = [];
  }
}
