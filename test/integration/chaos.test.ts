/**
 * The short chaos run inside `npm test`: every scenario of the chaos suite
 * (test/chaos; full sizes with `npm run chaos`) at a small size, each with
 * its faults, judged by the suite's checker: nothing lost, nothing
 * unexpected, every duplicate explained, every scenario claim holding.
 *
 * Each scenario owns its redis-server, database (or PostgreSQL instance) and
 * processes, so two run at once: most of a scenario's time is spent
 * waiting (process starts, lease expiry, outages), not computing.
 */
import { describe, expect, it } from "vitest";
import { selectedScenarios } from "../chaos/src/scenarios/index.js";
import { passed, runScenario } from "../chaos/src/scenarios/scenario.js";

const log = process.env.CHAOS_VERBOSE === "1" ? (m: string) => process.stderr.write(`${m}\n`) : () => undefined;

/** At most `n` scenarios at once. */
function limiter(n: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((resolve) => waiting.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      waiting.shift()?.();
    }
  };
}
const lane = limiter(2);

describe.concurrent("chaos suite, short version", () => {
  for (const scenario of selectedScenarios()) {
    it(`${scenario.id}. ${scenario.title}`, async () => {
      const r = await lane(() => runScenario(scenario, true, undefined, log));
      log(`[${scenario.id}] ${(r.durationMs / 1000).toFixed(1)} s ${JSON.stringify({ ...r.summary, verdicts: undefined })} ${JSON.stringify(r.claims)} ${r.notes.join("; ")}`);
      const view = JSON.stringify({ error: r.error, summary: { ...r.summary, verdicts: undefined }, problems: r.problems, failedClaims: r.claims.filter((c) => !c.holds) });
      expect(r.error, view).toBeUndefined();
      expect(r.summary.accepted, view).toBeGreaterThan(0);
      expect(r.summary.lost, view).toBe(0);
      expect(r.summary.unexpected, view).toBe(0);
      expect(r.summary.duplicatesExplained, view).toBe(r.summary.duplicated);
      expect(r.claims.filter((c) => !c.holds), view).toEqual([]);
      expect(passed(r)).toBe(true);
    }, 600_000); // includes waiting for a free lane
  }
});
