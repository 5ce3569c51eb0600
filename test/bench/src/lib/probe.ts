import { fileURLToPath } from "node:url";
import { spawnNode, type RunningProcess } from "./processes.js";
import type { HarnessMessage, ProbeMessage, StartSamples } from "./probe-protocol.js";
import { GiveUp, waitUntil } from "./time.js";

const childScript = fileURLToPath(new URL("../child.js", import.meta.url));

/** Every probe role and its settings (the child parses the same union). */
export type ProbeConfig =
  | { role: "push-receiver" }
  | { role: "pull-worker"; url: string; apiKey: string; queue: string; concurrency: number }
  | { role: "bullmq-worker"; redisUrl: string; prefix: string; queue: string; concurrency: number }
  | { role: "graphile-worker"; databaseUrl: string; concurrency: number; batched: boolean }
  | { role: "pgboss-worker"; databaseUrl: string; queue: string; workers: number; batchSize: number; pollingIntervalSeconds: number };

export interface StartSample {
  id: string;
  at: number;
  ref: number;
}

/**
 * The harness's handle on a probe process: its live counters, its start
 * samples, and its lifetime.
 */
export class Probe {
  started = 0;
  done = 0;
  lastDoneAt = 0;
  /** Set by push-receiver: the URL to give the PUSH queue. */
  url = "";
  private pendingCollect: ((samples: StartSamples) => void) | undefined;
  private failure: string | undefined;

  private constructor(readonly process: RunningProcess) {}

  static async start(label: string, config: ProbeConfig, env: Record<string, string> = {}): Promise<Probe> {
    const proc = spawnNode(label, childScript, [], { ipc: true, env: { ...env, BENCH_PROBE: JSON.stringify(config) } });
    const probe = new Probe(proc);
    let ready = false;
    proc.child.on("message", (raw: unknown) => {
      const message = raw as ProbeMessage;
      switch (message.kind) {
        case "ready":
          probe.url = message.url ?? "";
          ready = true;
          break;
        case "progress":
          probe.started = message.started;
          probe.done = message.done;
          probe.lastDoneAt = message.lastDoneAt;
          break;
        case "samples":
          probe.pendingCollect?.(message.samples);
          probe.pendingCollect = undefined;
          break;
        case "error":
          probe.failure = message.message;
          break;
      }
    });
    await waitUntil(
      `${label} to be ready`,
      () => {
        if (probe.failure) throw new GiveUp(`${label} failed: ${probe.failure}`);
        if (proc.child.exitCode !== null) throw new GiveUp(`${label} exited (${proc.child.exitCode}):\n${proc.output()}`);
        return ready ? true : undefined;
      },
      60_000,
      20,
    );
    return probe;
  }

  get pid(): number {
    return this.process.pid;
  }

  /** Problems the probe reported since it started (e.g. a failed lease call). */
  get error(): string | undefined {
    return this.failure;
  }

  /** Throws (GiveUp) when the probe process has exited. */
  assertAlive(): void {
    const code = this.process.child.exitCode;
    if (code !== null) throw new GiveUp(`${this.process.label} exited (${code}):\n${this.process.output().slice(-4000)}`);
  }

  /** Takes the start samples gathered since the previous collect. */
  async collect(timeoutMs = 30_000): Promise<StartSample[]> {
    const samples = await new Promise<StartSamples>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.process.label} did not answer collect`)), timeoutMs);
      this.pendingCollect = (s) => {
        clearTimeout(timer);
        resolve(s);
      };
      this.send({ kind: "collect" });
    });
    return samples.ids.map((id, i) => ({ id, at: samples.at[i] as number, ref: samples.ref[i] as number }));
  }

  async stop(): Promise<void> {
    this.send({ kind: "stop" });
    await Promise.race([this.process.exited, new Promise((r) => setTimeout(r, 10_000))]);
    await this.process.stop(2_000);
  }

  private send(message: HarnessMessage): void {
    if (this.process.child.connected) this.process.child.send(message);
  }
}
