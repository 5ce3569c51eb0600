import type { PeakRss } from "./rss.js";
import { spread, type Spread } from "./stats.js";

/** One figure of one system, measured once per run. */
export interface Figure {
  system: string;
  metric: string;
  unit: string;
  better: "higher" | "lower";
  runs: number[];
  /** Figures with the same table name are shown together; unnamed ones form the scenario's main table. */
  table?: string;
}

export interface FigureSummary extends Figure, Spread {}

export interface MemoryRow {
  system: string;
  process: string;
  peakMiB: number;
}

export interface ScenarioResult {
  id: number;
  title: string;
  /** How it was measured, one paragraph (goes into the docs). */
  method: string;
  figures: FigureSummary[];
  notes: string[];
  memory?: MemoryRow[];
  /** Show a table of Tasklane ÷ peer ratios of the higher-is-better figures. */
  ratios?: boolean;
  /** 1-minute load average as the scenario started and ended (filled in by main). */
  load?: { start: number; end: number };
  /** Seconds the scenario took (filled in by main). */
  seconds?: number;
}

/** Collects runs per (system, metric) in the order they first appear. */
export class FigureSet {
  private readonly figures = new Map<string, Figure>();

  add(system: string, metric: string, unit: string, better: Figure["better"], value: number, table?: string): void {
    const key = `${table ?? ""}\u0000${system}\u0000${metric}`;
    const figure = this.figures.get(key) ?? { system, metric, unit, better, runs: [], ...(table ? { table } : {}) };
    figure.runs.push(Math.round(value * 100) / 100);
    this.figures.set(key, figure);
  }

  summaries(): FigureSummary[] {
    return [...this.figures.values()].map((f) => ({ ...f, ...spread(f.runs) }));
  }
}

export function memoryRows(system: string, peaks: PeakRss[]): MemoryRow[] {
  return peaks.map((p) => ({ system, process: p.label, peakMiB: p.peakMiB }));
}
