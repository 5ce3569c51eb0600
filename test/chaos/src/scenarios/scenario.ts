import { History } from "../lib/history.js";
import { checkHistory, problems, type CheckSummary, type ItemVerdict } from "../lib/checker.js";

export interface ScenarioContext {
  /** Small sizes for `npm test`; full sizes for `npm run chaos`. */
  quick: boolean;
  history: History;
  log(message: string): void;
}

/** What a scenario reports besides the checker's verdict (figures named in its table). */
export interface ScenarioOutcome {
  faults: number;
  notes: string[];
  /** Checks of the scenario's own claims (typed errors, promptness...): each must hold. */
  claims: { claim: string; holds: boolean }[];
}

export interface Scenario {
  id: number;
  title: string;
  /** The fault, in one line, for the report. */
  fault: string;
  run(ctx: ScenarioContext): Promise<ScenarioOutcome>;
}

export interface ScenarioResult extends ScenarioOutcome {
  id: number;
  title: string;
  fault: string;
  quick: boolean;
  durationMs: number;
  summary: CheckSummary;
  problems: ItemVerdict[];
  error?: string;
}

/** Runs one scenario, then checks its history; a scenario that throws is a failed result, not a crash of the suite. */
export async function runScenario(s: Scenario, quick: boolean, historyFile: string | undefined, log: (m: string) => void): Promise<ScenarioResult> {
  const history = new History(historyFile);
  const started = Date.now();
  let outcome: ScenarioOutcome = { faults: 0, notes: [], claims: [] };
  let error: string | undefined;
  try {
    outcome = await s.run({ quick, history, log: (m) => log(`[${s.id}] ${m}`) });
  } catch (e) {
    error = e instanceof Error ? (e.stack ?? e.message) : String(e);
    log(`[${s.id}] FAILED: ${error}`);
  }
  history.flush();
  const summary = checkHistory(history.events);
  return { id: s.id, title: s.title, fault: s.fault, quick, durationMs: Date.now() - started, summary, problems: problems(summary), ...outcome, ...(error ? { error } : {}) };
}

/** The suite's verdict on one result: nothing lost, nothing unexpected, every duplicate explained, every claim holds. */
export function passed(r: ScenarioResult): boolean {
  return (
    r.error === undefined &&
    r.summary.accepted > 0 &&
    r.summary.lost === 0 &&
    r.summary.unexpected === 0 &&
    r.summary.duplicated === r.summary.duplicatesExplained &&
    r.claims.every((c) => c.holds)
  );
}
