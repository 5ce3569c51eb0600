/**
 * Reads the .cpuprofile files that `--profile <apps>` makes the Tasklane
 * processes write, and names where their CPU time went: by package (or
 * Tasklane workspace) and by function (self time).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  /** Share of samples (%) by package; "(idle)" is time waiting for I/O. */
  byPackage: { name: string; percent: number }[];
  bySelfTime: { name: string; percent: number }[];
}

function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith("(") ? functionName : "(native)";
  if (url.startsWith("node:")) return "node (internals)";
  const dep = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (dep) return dep[1] as string;
  const own = /\/(apps|packages)\/([^/]+)\//.exec(url);
  return own ? `tasklane ${own[1]}/${own[2]}` : path.basename(url);
}

export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const frame = byId.get(id)?.callFrame;
    if (!frame) return;
    total += dt;
    const pkg = packageOf(frame.url, frame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + dt);
    const fn = `${frame.functionName || "(anonymous)"} ${frame.url ? `${path.basename(frame.url)}:${frame.lineNumber + 1}` : ""} [${pkg}]`;
    functions.set(fn, (functions.get(fn) ?? 0) + dt);
  });
  const rank = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, t]) => ({ name, percent: Math.round((t / Math.max(1, total)) * 1000) / 10 }));
  return { file, totalMs: Math.round(total / 1000), byPackage: rank(packages), bySelfTime: rank(functions) };
}

/** Summaries of every profile in `dir` written at or after `since`. */
export function summarizeProfiles(dir: string, since: number): ProfileSummary[] {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
  } catch {
    return [];
  }
  return files
    .filter((f) => Number(/-(\d+)\.cpuprofile$/.exec(f)?.[1] ?? 0) >= since)
    .sort()
    .map((f) => summarizeProfile(path.join(dir, f)));
}

export function renderProfiles(summaries: ProfileSummary[]): string {
  return summaries
    .map((s) =>
      [
        `${path.basename(s.file)} (${s.totalMs.toLocaleString("en-US")} ms sampled)`,
        "  by package:   " + s.byPackage.map((p) => `${p.name} ${p.percent}%`).join(", "),
        "  by function (self):",
        ...s.bySelfTime.map((f) => `    ${f.percent.toFixed(1).padStart(5)}%  ${f.name}`),
      ].join("\n"),
    )
    .join("\n\n");
}
