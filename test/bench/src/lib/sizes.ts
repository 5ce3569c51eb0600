/**
 * How much work each scenario does, full and --quick. The full sizes keep
 * the whole run under 15 minutes on the 2-core reference machine; quick is a
 * smoke test of every path (under 2 minutes).
 */
export interface Sizes {
  /** Tasks per run of the sustained end-to-end throughput scenario. */
  throughputTasks: number;
  /** Per run: tasks submitted one at a time (32 in flight), and in batches of 500. */
  submitSingleTasks: number;
  submitBatchTasks: number;
  /** Seconds of steady submission at 1,000 tasks/s in the latency scenarios. */
  latencySeconds: number;
  /** Tenant A's backlog, and how long tenant B submits, in the fairness scenario. */
  fairnessBacklog: number;
  fairnessSeconds: number;
  /** Non-terminal tasks when Redis is wiped. */
  recoveryTasks: number;
}

export const FULL: Sizes = {
  throughputTasks: 20_000,
  submitSingleTasks: 5_000,
  submitBatchTasks: 50_000,
  latencySeconds: 8,
  fairnessBacklog: 100_000,
  fairnessSeconds: 10,
  recoveryTasks: 100_000,
};

export const QUICK: Sizes = {
  throughputTasks: 2_000,
  submitSingleTasks: 500,
  submitBatchTasks: 5_000,
  latencySeconds: 2,
  fairnessBacklog: 10_000,
  fairnessSeconds: 2,
  recoveryTasks: 10_000,
};
