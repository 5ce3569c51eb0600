import type { HarnessMessage, ProbeMessage, StartSamples } from "./probe-protocol.js";

/**
 * The probe side: counts handler starts and completions, keeps start
 * samples of tracked tasks, and talks to the harness over the IPC channel.
 */
export class Recorder {
  private started = 0;
  private done = 0;
  private lastDoneAt = 0;
  private samples: StartSamples = { ids: [], at: [], ref: [] };
  private reported = "";
  private readonly timer: NodeJS.Timeout;

  constructor(onStop: () => Promise<void>) {
    this.timer = setInterval(() => this.report(), 50);
    process.on("message", (raw: unknown) => {
      const message = raw as HarnessMessage;
      if (message.kind === "collect") {
        const samples = this.samples;
        this.samples = { ids: [], at: [], ref: [] };
        this.send({ kind: "samples", samples });
      } else if (message.kind === "stop") {
        clearInterval(this.timer);
        void onStop().finally(() => process.exit(0));
      }
    });
    // The harness is gone (crashed or killed): do not linger.
    process.on("disconnect", () => process.exit(0));
  }

  /** A handler started. `ref` is the payload's reference time, when tracked. */
  start(id: string, ref: number | undefined): void {
    this.started++;
    if (ref === undefined) return;
    this.samples.ids.push(id);
    this.samples.at.push(Date.now());
    this.samples.ref.push(ref);
  }

  /** The queue library confirmed a completion (where it tells us). */
  completed(): void {
    this.done++;
    this.lastDoneAt = Date.now();
  }

  ready(url?: string): void {
    this.send(url === undefined ? { kind: "ready" } : { kind: "ready", url });
  }

  fail(error: unknown): void {
    this.send({ kind: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }

  private report(): void {
    const key = `${this.started}/${this.done}`;
    if (key === this.reported) return;
    this.reported = key;
    this.send({ kind: "progress", started: this.started, done: this.done, lastDoneAt: this.lastDoneAt });
  }

  private send(message: ProbeMessage): void {
    if (process.connected) process.send?.(message);
  }
}
