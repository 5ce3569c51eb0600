/**
 * `npm run bench`: Tasklane side by side with BullMQ, graphile-worker and
 * pg-boss on this machine. Progress on stderr; results in
 * bench-results/<timestamp>.json and .md, and — for a full run of every
 * scenario — docs/benchmarks.md.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { cleanupAll } from "./lib/cleanup.js";
import { ALL_SCENARIOS, parseArgs } from "./lib/cli.js";
import { renderProfiles, summarizeProfiles } from "./lib/cpu-profile.js";
import { measureKernel } from "./lib/kernel.js";
import { collectMeta, gitCommit, loadNow, waitForIdle, type RunMeta } from "./lib/meta.js";
import { profileDir, repoRoot } from "./lib/processes.js";
import { elapsedSinceStart, log } from "./lib/progress.js";
import { renderMarkdown } from "./lib/report.js";
import type { ScenarioResult } from "./lib/results.js";
import { FULL, QUICK } from "./lib/sizes.js";
import { resolveRedisServerPid } from "./lib/redis.js";
import { checkTargets } from "./lib/targets.js";
import { SCENARIOS } from "./scenarios/index.js";

const opts = parseArgs(process.argv.slice(2));
const analysisFile = path.join(repoRoot, "test", "bench", "analysis.md");

/** A run's report with today's hand-written analysis. */
function renderReport(meta: RunMeta, scenarios: ScenarioResult[], targets: ReturnType<typeof checkTargets>): string {
  const analysis = existsSync(analysisFile) ? readFileSync(analysisFile, "utf8") : undefined;
  return renderMarkdown({ meta, scenarios, targets, ...(analysis ? { analysis } : {}) });
}

/** Only a run like this may become docs/benchmarks.md. */
const isFullRun = (run: { quick: boolean; runs: number; systems?: readonly string[] | undefined; failures: string[]; scenarioIds: number[] }) =>
  !run.quick && run.systems === undefined && run.failures.length === 0 && run.runs >= 3 && ALL_SCENARIOS.every((id) => run.scenarioIds.includes(id));

if (opts.render !== undefined) {
  // The saved run's own figures, meta and command; the hand-written analysis and the targets' wording are today's.
  const saved = JSON.parse(readFileSync(opts.render, "utf8")) as { meta: RunMeta; scenarios: ScenarioResult[]; failures: string[] };
  if (!isFullRun({ ...saved.meta, failures: saved.failures, scenarioIds: saved.scenarios.map((s) => s.id) })) {
    throw new Error(`${opts.render} is not a full run of every scenario with 3+ runs; docs/benchmarks.md is only written from one`);
  }
  const targets = checkTargets(new Map(saved.scenarios.map((s) => [s.id, s])));
  writeFileSync(path.join(repoRoot, "docs", "benchmarks.md"), renderReport(saved.meta, saved.scenarios, targets));
  log(`docs/benchmarks.md rewritten from ${opts.render}`);
  process.exit(0);
}
let interrupted = false;
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log("interrupted: stopping processes and dropping databases (again to force)");
    void cleanupAll().finally(() => process.exit(130));
  });
}

if (opts.waitForIdleMinutes > 0) await waitForIdle(opts.waitForIdleMinutes);
await resolveRedisServerPid().catch(() => undefined);
const startedAt = new Date();
const loadAtStart = loadNow();
const commitAtStart = gitCommit();
// Before any process of the bench runs: measured on a quiet machine.
const kernelAtStart = measureKernel();
const results = new Map<number, ScenarioResult>();
const failures: string[] = [];
log(`${opts.quick ? "quick" : "full"} run · scenarios ${opts.scenarios.join(", ")} · ${opts.runs} run(s) each · load average ${loadAtStart}`);
for (const id of opts.scenarios) {
  const scenario = SCENARIOS.find((s) => s.id === id);
  if (!scenario) continue;
  log(`scenario ${id}: ${scenario.title}`);
  const started = Date.now();
  const load = loadNow();
  try {
    const result = await scenario.run({ sizes: opts.quick ? QUICK : FULL, runs: opts.runs, quick: opts.quick, profile: opts.profile, systems: opts.systems, earlier: results });
    results.set(id, { ...result, load: { start: load, end: loadNow() }, seconds: Math.round((Date.now() - started) / 1000) });
  } catch (error: unknown) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push(`scenario ${id}: ${message}`);
    log(`scenario ${id} FAILED`, message);
  } finally {
    // Whatever the scenario left running (after a failure) goes now.
    await cleanupAll();
  }
  if (interrupted) break;
}

const meta = await collectMeta({ argv: opts.argv, quick: opts.quick, runs: opts.runs, scenarios: opts.scenarios, systems: opts.systems, startedAt, loadAtStart, commitAtStart, kernelAtStart });
const scenarios = [...results.values()].sort((a, b) => a.id - b.id);
const targets = checkTargets(results);
const markdown = renderReport(meta, scenarios, targets);

const outDir = path.join(repoRoot, "bench-results");
mkdirSync(outDir, { recursive: true });
const stamp = startedAt.toISOString().replace(/[:.]/g, "-");
const jsonFile = path.join(outDir, `${stamp}${opts.quick ? "-quick" : ""}.json`);
const profiles = opts.profile.length ? summarizeProfiles(profileDir, startedAt.getTime()) : [];
writeFileSync(jsonFile, `${JSON.stringify({ meta, targets, scenarios, failures, profiles }, null, 2)}\n`);
writeFileSync(jsonFile.replace(/\.json$/, ".md"), markdown);
const complete = isFullRun({ quick: opts.quick, runs: opts.runs, systems: opts.systems, failures, scenarioIds: [...results.keys()] });
if (complete) writeFileSync(path.join(repoRoot, "docs", "benchmarks.md"), markdown);

process.stdout.write(`${markdown}\n`);
if (profiles.length) process.stderr.write(`\nCPU profiles (${path.relative(process.cwd(), profileDir)}):\n${renderProfiles(profiles)}\n\n`);
log(`results: ${path.relative(process.cwd(), jsonFile)}${complete ? " and docs/benchmarks.md" : " (docs/benchmarks.md is only rewritten by a full run of every scenario)"}`);
log(`took ${Math.round(elapsedSinceStart() / 1000)} s`);
if (failures.length) {
  log(`${failures.length} scenario(s) failed`);
  process.exitCode = 1;
}
