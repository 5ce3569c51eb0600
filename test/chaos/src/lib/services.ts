/**
 * The suite's own Redis and PostgreSQL servers on free loopback ports in temp
 * dirs: FLUSHALL, restarts and kills only ever hit these, never the shared
 * services of the machine.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, chownSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { freePort } from "../../../helpers/free-port.js";
import { waitUntil } from "./wait.js";

export { freePort };

export interface RedisServer {
  url: string;
  port: number;
  /** FLUSHALL on this instance (nobody else's). */
  flushAll(): Promise<void>;
  /** SIGKILL and start again on the same port, empty (no persistence). */
  restart(downMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisServer> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}/0`;
  let child: ChildProcess | undefined;
  const launch = async () => {
    child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--maxclients", "2000"], {
      stdio: "ignore",
    });
    await waitUntil("redis-server to answer", async () => (await ping(url)) === "PONG", 10_000, 50);
  };
  const kill = async () => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill("SIGKILL");
    await exited;
  };
  await launch();
  return {
    url,
    port,
    async flushAll() {
      const r = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
      try {
        await r.connect();
        await r.flushall();
      } finally {
        r.disconnect();
      }
    },
    async restart(downMs = 0) {
      await kill();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await launch();
    },
    stop: kill,
  };
}

async function ping(url: string): Promise<string | undefined> {
  const r = new Redis(url, { maxRetriesPerRequest: 0, lazyConnect: true, retryStrategy: () => null });
  r.on("error", () => undefined);
  try {
    await r.connect();
    return await r.ping();
  } catch {
    return undefined;
  } finally {
    r.disconnect();
  }
}

export interface PostgresServer {
  /** Admin URL (database postgres). */
  adminUrl: string;
  port: number;
  /** Fast shutdown (`pg_ctl stop -m fast`), wait `downMs`, start again on the same port and data dir. */
  restart(downMs: number): Promise<{ downAt: number; upAt: number }>;
  stop(): Promise<void>;
}

const PG_BIN = process.env.CHAOS_PG_BIN ?? "/usr/lib/postgresql/15/bin";

/** Runs a PostgreSQL binary as the postgres user (the server refuses root). */
/** Asynchronous, so the suite's own endpoint and recorder keep running while Postgres stops and starts. */
function asPostgres(bin: string, args: string[]): Promise<{ status: number | null; output: string }> {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? "runuser" : path.join(PG_BIN, bin);
  const full = asRoot ? ["-u", "postgres", "--", path.join(PG_BIN, bin), ...args] : args;
  return new Promise((resolve) => {
    const child = spawn(command, full, { stdio: ["ignore", "pipe", "pipe"], timeout: 60_000 });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("close", (status) => resolve({ status, output }));
  });
}

export async function startPostgresServer(): Promise<PostgresServer> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "tasklane-chaos-pg-"));
  const data = path.join(dir, "data");
  if (process.getuid?.() === 0) {
    const ids = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
    const gids = spawnSync("id", ["-g", "postgres"], { encoding: "utf8" });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const init = await asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  if (init.status !== 0) throw new Error(`initdb failed: ${init.output}`);
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300 -c shared_buffers=128MB`;
  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const start = async () => {
    const res = await asPostgres("pg_ctl", ["-D", data, "-o", opts, "-l", path.join(dir, "log"), "-w", "-t", "60", "start"]);
    if (res.status !== 0) throw new Error(`pg_ctl start failed: ${res.output}`);
    await waitUntil("postgres to accept connections", async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      try {
        await c.connect();
        await c.query("SELECT 1");
        return true;
      } finally {
        await c.end().catch(() => undefined);
      }
    }, 30_000, 100);
  };
  const stop = async () => {
    await asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "60", "stop"]);
  };
  await start();
  return {
    adminUrl,
    port,
    async restart(downMs) {
      await stop();
      const downAt = Date.now();
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await start();
      return { downAt, upAt: Date.now() };
    },
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
