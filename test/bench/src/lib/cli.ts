export interface BenchOptions {
  quick: boolean;
  /** Scenario numbers to run, ascending. */
  scenarios: number[];
  /** Runs per measurement (median and min–max over them). */
  runs: number;
  /** Processes to run under `node --cpu-prof` (gateway, scheduler, notifier, worker). */
  profile: string[];
  /** Only these systems in s1, s3 and s4 (for A/B runs); undefined = all. */
  systems: SystemName[] | undefined;
  /** Wait up to this many minutes for the machine to be idle (1-min load average below the core count) before starting. */
  waitForIdleMinutes: number;
  /** Re-render docs/benchmarks.md from this saved full run (with the current analysis.md) instead of measuring. */
  render: string | undefined;
  /** The arguments as given, for the "exact command" line. */
  argv: string[];
}

export const ALL_SCENARIOS = [1, 2, 3, 4, 5, 6, 7] as const;

/** What `--systems` names: Tasklane's two modes and the peers. */
export const SYSTEM_NAMES = ["push", "pull", "bullmq", "graphile", "graphile-batched", "pg-boss"] as const;
export type SystemName = (typeof SYSTEM_NAMES)[number];
const isSystemName = (s: string): s is SystemName => (SYSTEM_NAMES as readonly string[]).includes(s);

const USAGE = `npm run bench [-- --quick] [--scenario <n>[,<n>…]] [--runs <n>] [--profile gateway,worker]

  --quick            small sizes, 1 run each (a smoke test, under 2 minutes)
  --scenario <n>     run only these scenarios (1-7; repeatable or comma-separated)
  --runs <n>         runs per measurement (default 3, quick 1)
  --profile <apps>   run these Tasklane processes with node --cpu-prof (into bench-results/profiles)
  --systems <names>  measure only these systems in s1, s3 and s4 (push, pull, bullmq, graphile,
                     graphile-batched, pg-boss; comma-separated): for alternating A/B runs
  --wait-for-idle <minutes>
                     first wait (at most that long) for the 1-min load average to drop below the core count
  --render <results.json>
                     measure nothing: rewrite docs/benchmarks.md from a saved full run and the current
                     test/bench/analysis.md (the analysis is written after the figures are in)`;

export function parseArgs(argv: string[]): BenchOptions {
  let quick = false;
  let runs: number | undefined;
  const scenarios = new Set<number>();
  const profile: string[] = [];
  let systems: Set<SystemName> | undefined;
  let waitForIdleMinutes = 0;
  let render: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value\n\n${USAGE}`);
      return v;
    };
    if (arg === "--quick") quick = true;
    else if (arg === "--scenario" || arg === "-s") {
      for (const part of value().split(",")) {
        const n = Number(part);
        if (!ALL_SCENARIOS.includes(n as (typeof ALL_SCENARIOS)[number])) throw new Error(`unknown scenario ${part}\n\n${USAGE}`);
        scenarios.add(n);
      }
    } else if (arg === "--runs") {
      runs = Number(value());
      if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error(`--runs must be 1..20\n\n${USAGE}`);
    } else if (arg === "--profile") profile.push(...value().split(","));
    else if (arg === "--systems") {
      systems ??= new Set();
      for (const name of value().split(",")) {
        if (!isSystemName(name)) throw new Error(`unknown system ${name}\n\n${USAGE}`);
        systems.add(name);
      }
    }
    else if (arg === "--wait-for-idle") {
      waitForIdleMinutes = Number(value());
      if (!(waitForIdleMinutes >= 0 && waitForIdleMinutes <= 120)) throw new Error(`--wait-for-idle must be 0..120 minutes\n\n${USAGE}`);
    }
    else if (arg === "--render") render = value();
    else if (arg === "--help" || arg === "-h") {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument ${arg}\n\n${USAGE}`);
  }
  return {
    quick,
    scenarios: scenarios.size ? [...scenarios].sort((a, b) => a - b) : [...ALL_SCENARIOS],
    runs: runs ?? (quick ? 1 : 3),
    profile,
    systems: systems ? SYSTEM_NAMES.filter((n) => systems.has(n)) : undefined,
    waitForIdleMinutes,
    render,
    argv,
  };
}
