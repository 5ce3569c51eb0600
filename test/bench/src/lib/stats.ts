/** Percentiles by the nearest-rank method: p99 of 1,000 samples is the 990th smallest. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** Median and range of one figure over several runs. */
export function spread(values: readonly number[]): Spread {
  const sorted = [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN };
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

export interface LatencySummary {
  count: number;
  min: number;
  p50: number;
  p99: number;
  max: number;
  /** Samples below zero (a start before its reference time). */
  negative: number;
}

export function summarizeLatency(values: readonly number[]): LatencySummary {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    count: sorted.length,
    min: sorted.length ? (sorted[0] as number) : Number.NaN,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
    negative: sorted.filter((v) => v < 0).length,
  };
}
