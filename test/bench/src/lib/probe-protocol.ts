/**
 * Messages between the harness and its probe processes: the PUSH receiver,
 * the PULL worker, and each peer's worker. A probe is where a handler runs,
 * so it is where "handler start" is timestamped.
 */

/** Handler starts of tracked tasks (those whose payload carries `ref`). */
export interface StartSamples {
  ids: string[];
  /** Date.now() when the handler started. */
  at: number[];
  /** The payload's reference time (runAt or submit time), ms since the epoch. */
  ref: number[];
}

export type ProbeMessage =
  /** `url`: where the probe listens (the PUSH receiver). */
  | { kind: "ready"; url?: string }
  | { kind: "progress"; started: number; done: number; lastDoneAt: number }
  | { kind: "samples"; samples: StartSamples }
  | { kind: "error"; message: string };

export type HarnessMessage = { kind: "collect" } | { kind: "stop" };

/** What every task payload of the bench looks like. */
export interface BenchPayload {
  /** Present on tracked tasks: a reference time in ms since the epoch. */
  ref?: number;
}

export const refOf = (payload: unknown): number | undefined => {
  if (typeof payload !== "object" || payload === null) return undefined;
  const ref = (payload as BenchPayload).ref;
  return typeof ref === "number" ? ref : undefined;
};
