/**
 * A real Redis Cluster for one test file: N masters (no replicas) as
 * redis-server child processes on loopback ports, in a temp dir, nothing
 * persisted. Never touches the shared Redis on 6379.
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Redis } from "ioredis";
import { waitFor } from "./app-process.js";

const run = promisify(execFile);

export interface RedisClusterNode {
  host: string;
  port: number;
}

export interface TestRedisCluster {
  readonly nodes: RedisClusterNode[];
  /** The value for REDIS_CLUSTER_NODES. */
  readonly seedList: string;
  /** The plain connection to one master (for per-node checks such as SCAN or CLUSTER KEYSLOT). */
  node(index: number): Redis;
  stop(): Promise<void>;
}

const portIsFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });

/** A port p with p and its cluster bus port p + 10000 both free. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (let tries = 0; tries < 200; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 35_000);
    if (taken.has(port) || !(await portIsFree(port)) || !(await portIsFree(port + 10_000))) continue;
    taken.add(port);
    return port;
  }
  throw new Error("no free port pair for a Redis Cluster node");
}

export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = await mkdtemp(path.join(tmpdir(), "tl-redis-cluster-"));
  const taken = new Set<number>();
  const children: ChildProcess[] = [];
  const clients: Redis[] = [];
  const nodes: RedisClusterNode[] = [];
  const stop = async () => {
    for (const c of clients) c.disconnect();
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
            child.once("exit", () => {
              clearTimeout(timer);
              resolve();
            });
            child.kill("SIGTERM");
          }),
      ),
    );
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await clusterPort(taken);
      // prettier-ignore
      const child = spawn("redis-server", [
        "--port", String(port), "--bind", "127.0.0.1", "--dir", dir,
        "--cluster-enabled", "yes", "--cluster-config-file", `nodes-${port}.conf`, "--cluster-node-timeout", "5000",
        "--save", "", "--appendonly", "no", "--logfile", `redis-${port}.log`,
      ], { stdio: "ignore" });
      children.push(child);
      nodes.push({ host: "127.0.0.1", port });
    }
    for (const n of nodes) {
      const client = new Redis({ host: n.host, port: n.port, maxRetriesPerRequest: 1 });
      // Refused until redis-server listens, and again while stop() shuts it down: the probes below decide.
      client.on("error", () => undefined);
      clients.push(client);
    }
    const node = (index: number) => {
      const client = clients[index];
      if (!client) throw new Error(`no cluster node ${index}`);
      return client;
    };
    const probes = clients;
    await waitFor("redis-server nodes to answer", async () => (await Promise.all(probes.map((p) => p.ping()))).every((r) => r === "PONG"), 10_000, 50);
    await run("redis-cli", ["--cluster", "create", ...nodes.map((n) => `${n.host}:${n.port}`), "--cluster-replicas", "0", "--cluster-yes"], { timeout: 30_000 });
    await waitFor(
      "cluster_state:ok on every node",
      async () => (await Promise.all(probes.map((p) => p.cluster("INFO")))).every((info) => String(info).includes("cluster_state:ok")),
      20_000,
      100,
    );
    return { nodes, seedList: nodes.map((n) => `${n.host}:${n.port}`).join(","), node, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
