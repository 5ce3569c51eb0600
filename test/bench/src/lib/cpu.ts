/**
 * CPU time (user + system) that processes spend during a measurement, read
 * from /proc/<pid>/stat. Unlike rates, CPU time per task hardly changes when
 * other work shares the machine, so it is the figure to compare costs with.
 */
import { readFile } from "node:fs/promises";
import type pg from "pg";
import type { WatchedProcess } from "./system.js";

/** Kernel clock ticks per second (USER_HZ); 100 on Linux. */
const TICKS_PER_SECOND = 100;

/** CPU milliseconds the process has used so far, or undefined once it is gone. */
export async function cpuMsOf(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start at ") ".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Postgres backends serving a database, except the harness's own connections. */
async function backendsOf(pool: pg.Pool, database: string): Promise<number[]> {
  const res = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND backend_type = 'client backend' AND application_name <> 'tasklane-bench'",
    [database],
  );
  return res.rows.map((r) => r.pid);
}

export const POSTGRES_LABEL = "Postgres (its backends)";

/**
 * Measures CPU used between start() and stop() by each watched process and,
 * when given a database, by the Postgres backends serving it (backends that
 * come and go within the window are missed: pools keep theirs open).
 */
export class CpuMeter {
  private readonly before = new Map<number, number>();

  constructor(
    private readonly processes: WatchedProcess[],
    private readonly postgres?: { pool: pg.Pool; database: string },
  ) {}

  async start(): Promise<void> {
    for (const pid of await this.pids()) {
      const ms = await cpuMsOf(pid);
      if (ms !== undefined) this.before.set(pid, ms);
    }
  }

  /** CPU milliseconds per label since start(). */
  async stop(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const add = (label: string, ms: number) => out.set(label, (out.get(label) ?? 0) + ms);
    for (const p of this.processes) {
      const now = await cpuMsOf(p.pid);
      if (now !== undefined) add(p.label, now - (this.before.get(p.pid) ?? 0));
    }
    if (this.postgres) {
      add(POSTGRES_LABEL, 0);
      for (const pid of await backendsOf(this.postgres.pool, this.postgres.database)) {
        const now = await cpuMsOf(pid);
        if (now !== undefined) add(POSTGRES_LABEL, now - (this.before.get(pid) ?? 0));
      }
    }
    return out;
  }

  private async pids(): Promise<number[]> {
    const own = this.processes.map((p) => p.pid);
    return this.postgres ? [...own, ...(await backendsOf(this.postgres.pool, this.postgres.database))] : own;
  }
}

export const HARNESS_LABEL = "harness (client side)";

/** What a system shows of itself to be metered. */
export interface MeteredSystem {
  processes(): WatchedProcess[];
  database: { pool: pg.Pool; name: string } | undefined;
}

/** A meter of the system's processes, its Postgres backends, and the harness. */
export function cpuMeterFor(system: MeteredSystem): CpuMeter {
  const db = system.database;
  return new CpuMeter([...system.processes(), { label: HARNESS_LABEL, pid: process.pid }], db ? { pool: db.pool, database: db.name } : undefined);
}

/**
 * Measures `fn` and adds, per 1,000 finished tasks, the CPU milliseconds of
 * each process of the system, its Postgres backends, the harness (which
 * holds the peers' client libraries and Tasklane's SDK client), and their total.
 */
export async function withCpuPerTask<T extends { finished: number }>(
  system: MeteredSystem,
  record: (process: string, msPer1000: number) => void,
  fn: () => Promise<T>,
): Promise<T> {
  const meter = cpuMeterFor(system);
  await meter.start();
  const out = await fn();
  const used = await meter.stop();
  if (out.finished > 0) {
    let total = 0;
    for (const [label, ms] of used) {
      total += ms;
      record(label, (ms * 1000) / out.finished);
    }
    record("total", (total * 1000) / out.finished);
  }
  return out;
}
