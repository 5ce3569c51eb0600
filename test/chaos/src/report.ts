/** The chaos report: a table per scenario, as printed and as written to docs/reliability.md. */
import { passed, type ScenarioResult } from "./scenarios/scenario.js";

const seconds = (ms: number | null) => (ms === null ? "–" : `${(ms / 1000).toFixed(1)} s`);

export function scenarioTable(r: ScenarioResult): string {
  const s = r.summary;
  const lines = [
    `### ${r.id}. ${r.title}`,
    "",
    `Fault: ${r.fault}.`,
    "",
    "| accepted | completed once | duplicated (explained) | dead-lettered | lost | unexpected | faults | recovery time | run time | verdict |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---|",
    `| ${s.accepted} | ${s.completedOnce} | ${s.duplicated} (${s.duplicatesExplained}) | ${s.deadLettered} | ${s.lost} | ${s.unexpected} | ${r.faults} | ${seconds(s.recoveryMs)} | ${seconds(r.durationMs)} | ${passed(r) ? "pass" : "**FAIL**"} |`,
    "",
    ...r.notes.map((n) => `- ${n}`),
    ...r.claims.map((c) => `- ${c.holds ? "holds" : "**does not hold**"}: ${c.claim}`),
  ];
  if (r.problems.length > 0) lines.push(...r.problems.map((p) => `- problem: \`${p.item}\` ${p.verdict}${p.reason ? ` (${p.reason})` : ""}`));
  if (r.error) lines.push("", "```", r.error.slice(0, 2_000), "```");
  return lines.join("\n");
}

export interface RunFacts {
  command: string;
  startedAt: Date;
  cores: number;
  cpuModel: string;
  node: string;
  quick: boolean;
}

/** Which run produced a table: the command, when, on what. */
export function runLine(f: RunFacts): string {
  const at = new Date(f.startedAt).toISOString().replace("T", " ").slice(0, 16);
  return `<sub>From \`${f.command}\`, run ${at} UTC on ${f.cores} cores (${f.cpuModel}), Node ${f.node}, ${f.quick ? "quick sizes" : "full sizes"}.</sub>`;
}

export function runHeader(f: RunFacts, results: ScenarioResult[]): string {
  const ok = results.filter(passed).length;
  return [
    `Command: \`${f.command}\` — run ${f.startedAt.toISOString().replace("T", " ").slice(0, 16)} UTC on ${f.cores} cores (${f.cpuModel}), Node ${f.node}, ${f.quick ? "quick sizes" : "full sizes"}.`,
    `Result: ${ok} of ${results.length} scenarios pass.`,
  ].join("\n");
}
