/**
 * Everything the commands read from or write to the terminal, in one object:
 * the real process gives processIo(); unit tests give a recording one, so a
 * command's output and exit code are checked without spawning a process.
 */
import { readFile, stat } from "node:fs/promises";
import { createInterface } from "node:readline/promises";
import { Interrupted } from "./errors.js";

export interface CliIo {
  /** Writes to standard output as given (callers add the newline). */
  out(text: string): void;
  /** Writes to standard error as given. */
  err(text: string): void;
  readonly stdoutIsTTY: boolean;
  /** Progress lines rewrite themselves only on a terminal. */
  readonly stderrIsTTY: boolean;
  /** Destructive commands ask for confirmation only on a terminal. */
  readonly stdinIsTTY: boolean;
  /** A file's whole text, or standard input's for "-"; FileTooLarge past `maxBytes`, before reading it all. */
  readText(path: string, maxBytes: number): Promise<string>;
  /** Asks `question` on stderr and answers the line typed (a terminal's stdin only); Interrupted on Ctrl-C. */
  ask(question: string): Promise<string>;
  /**
   * Calls `listener` on each SIGINT (Ctrl-C) instead of ending the process,
   * until the function answered is called. Only a command that has something
   * to say when stopped (submit, dead-letters redrive/discard: how far it got) takes it over.
   */
  onInterrupt(listener: () => void): () => void;
  /**
   * Calls `listener` on SIGINT and on SIGTERM instead of ending the process, until the function
   * answered is called. For a command that runs until it is stopped (tasks tail), for which either
   * signal is its ordinary end, not a run cut short.
   */
  onStop(listener: () => void): () => void;
}

/** Ctrl-C, and what a service manager or `kill` sends. */
const STOP_SIGNALS = ["SIGINT", "SIGTERM"] as const;

export function processIo(): CliIo {
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    stdoutIsTTY: process.stdout.isTTY === true,
    stderrIsTTY: process.stderr.isTTY === true,
    stdinIsTTY: process.stdin.isTTY === true,
    async readText(path, maxBytes) {
      if (path === "-") return readAtMost(process.stdin, maxBytes);
      const { size } = await stat(path);
      if (size > maxBytes) throw new FileTooLarge(size, maxBytes);
      return readFile(path, "utf8");
    },
    async ask(question) {
      const rl = createInterface({ input: process.stdin, output: process.stderr });
      try {
        return await rl.question(question);
      } catch (error: unknown) {
        // readline answers Ctrl-C at the question with an AbortError: the user stopped the command, as a SIGINT would.
        if (error instanceof Error && "code" in error && error.code === "ABORT_ERR") throw new Interrupted();
        throw error;
      } finally {
        rl.close();
      }
    },
    onInterrupt(listener) {
      process.on("SIGINT", listener);
      return () => void process.off("SIGINT", listener);
    },
    onStop(listener) {
      for (const signal of STOP_SIGNALS) process.on(signal, listener);
      return () => STOP_SIGNALS.forEach((signal) => process.off(signal, listener));
    },
  };
}

/** A file or input longer than a command reads whole. `bytes` is a lower bound for a stream (what had come). */
export class FileTooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`larger than ${maxBytes} bytes`);
    this.name = "FileTooLarge";
  }
}

/** A stream's whole text (standard input), or FileTooLarge as soon as more than `maxBytes` have come. */
export async function readAtMost(stream: AsyncIterable<Buffer | string>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    bytes += buffer.length;
    if (bytes > maxBytes) throw new FileTooLarge(bytes, maxBytes);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
