/**
 * `npm run chaos`: runs the chaos scenarios against real processes, prints a
 * table per scenario, writes every history to chaos-results/ and the report
 * into docs/reliability.md (between its RESULTS markers).
 *
 *   npm run chaos                       all ten, full sizes
 *   npm run chaos -- --scenario 4       one scenario (repeatable, or 1,4,5)
 *   npm run chaos -- --quick            the sizes `npm test` uses
 *   npm run chaos -- --no-write         print only
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "./lib/apps.js";
import { runHeader, runLine, scenarioTable, type RunFacts } from "./report.js";
import { selectScenarios } from "./scenarios/index.js";
import { passed, runScenario, type ScenarioResult } from "./scenarios/scenario.js";

const { values } = parseArgs({
  options: {
    scenario: { type: "string", multiple: true },
    quick: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
  },
});

const BEGIN = "<!-- chaos-results:begin -->";
const END = "<!-- chaos-results:end -->";

const started = new Date();
const t0 = Date.now();
const log = (m: string) => process.stdout.write(`${((Date.now() - t0) / 1000).toFixed(1).padStart(7)}s ${m}\n`);
const scenarios = selectScenarios(values.scenario?.join(","));
const command = `npm run chaos${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
const resultsDir = path.join(repoRoot, "chaos-results");

const results: ScenarioResult[] = [];
for (const s of scenarios) {
  log(`scenario ${s.id}: ${s.title}`);
  const r = await runScenario(s, values.quick, path.join(resultsDir, `scenario-${s.id}.jsonl`), log);
  results.push(r);
  process.stdout.write(`\n${scenarioTable(r)}\n\n`);
}

const facts: RunFacts = { command, startedAt: started, cores: os.cpus().length, cpuModel: os.cpus()[0]?.model.trim() ?? "unknown CPU", node: process.version, quick: values.quick };
process.stdout.write(`${runHeader(facts, results)}\nHistories: ${resultsDir}/scenario-N.jsonl\n`);

// The report shows the latest result of every scenario: a run of one scenario replaces only its own table.
const latestFile = path.join(resultsDir, "latest.json");
const latest = new Map<number, { facts: RunFacts; result: ScenarioResult }>(
  existsSync(latestFile) ? (JSON.parse(readFileSync(latestFile, "utf8")) as [number, { facts: RunFacts; result: ScenarioResult }][]) : [],
);
for (const r of results) latest.set(r.id, { facts: { ...facts, startedAt: started }, result: { ...r, summary: { ...r.summary, verdicts: [] } } });
writeFileSync(latestFile, JSON.stringify([...latest.entries()]));
const shown = [...latest.values()].sort((a, b) => a.result.id - b.result.id);
const body = shown.map(({ facts: f, result }) => `${scenarioTable(result)}\n\n${runLine(f)}`).join("\n\n");

if (!values["no-write"]) {
  const doc = path.join(repoRoot, "docs", "reliability.md");
  const current = existsSync(doc) ? readFileSync(doc, "utf8") : `# Reliability\n\n${BEGIN}\n${END}\n`;
  const at = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next = at >= 0 && end > at ? `${current.slice(0, at + BEGIN.length)}\n${body}\n${current.slice(end)}` : `${current}\n${BEGIN}\n${body}\n${END}\n`;
  writeFileSync(doc, next);
  log(`report written to ${path.relative(repoRoot, doc)}`);
}
process.exit(results.every(passed) ? 0 : 1);
