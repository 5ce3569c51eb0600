/**
 * How much work each scenario does, full and --quick. The full sizes keep
 * the whole run under 15 minutes on the 2-core reference machine; quick is a
 * smoke test of every path (under 2 minutes).
 */
export interface Sizes {
  /** Per run of the sustained end-to-end throughput scenario: at most this many tasks, for at most this long. */
  throughputTasks: number;
  throughputWindowSeconds: number;
  /**
   * At most this long for the untimed run before each measured one: V8's warm-up is over by then,
   * and graphile-worker's default mode (~600 tasks/s) had spent a full window on it every round.
   */
  throughputWarmUpSeconds: number;
  /** Per run: tasks submitted one at a time (32 in flight), and in batches of 500, for at most submitSeconds each. */
  submitSingleTasks: number;
  submitBatchTasks: number;
  submitSeconds: number;
  /** Seconds of steady submission at 1,000 tasks/s in the latency scenarios, and how long the last start may lag behind. */
  latencySeconds: number;
  latencyDrainSeconds: number;
  /**
   * Unrecorded seconds at the rate before a system's first latency run. V8 optimises a process's
   * hot paths over its first seconds at the rate: the gateway's CPU at 1,000 PULL tasks/s fell from
   * ~645 to ~300 ms a second over 30 s, and Tasklane PULL's p99 from 33 ms in the first 5 s to 15
   * and then 10 (test/bench/findings.md). Shorter, the runs measure that warm-up, not the rate.
   */
  latencyWarmUpSeconds: number;
  /** Tenant A's backlog, and how long tenant B submits, in the fairness scenario. */
  fairnessBacklog: number;
  fairnessSeconds: number;
  /** Non-terminal tasks when Redis is wiped. */
  recoveryTasks: number;
}

export const FULL: Sizes = {
  throughputTasks: 20_000,
  throughputWindowSeconds: 10,
  throughputWarmUpSeconds: 5,
  submitSingleTasks: 5_000,
  submitBatchTasks: 50_000,
  submitSeconds: 5,
  latencySeconds: 5,
  latencyDrainSeconds: 8,
  latencyWarmUpSeconds: 10,
  fairnessBacklog: 100_000,
  fairnessSeconds: 8,
  recoveryTasks: 100_000,
};

export const QUICK: Sizes = {
  throughputTasks: 2_000,
  throughputWindowSeconds: 4,
  throughputWarmUpSeconds: 2,
  submitSingleTasks: 500,
  submitBatchTasks: 5_000,
  submitSeconds: 2,
  latencySeconds: 2,
  latencyDrainSeconds: 3,
  latencyWarmUpSeconds: 1,
  fairnessBacklog: 10_000,
  fairnessSeconds: 2,
  recoveryTasks: 10_000,
};
