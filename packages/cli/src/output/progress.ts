/**
 * Progress of a long command (submit, dead-letters redrive/discard) on
 * stderr, so stdout stays the command's result. On a terminal one line is
 * rewritten in place after each step; elsewhere (a log file, CI) each step
 * is a line of its own, so the log shows how far a run got. --quiet: nothing.
 */
import type { CliIo } from "../io.js";
import { count, duration } from "./format.js";

export interface ProgressSnapshot {
  done: number;
  total: number;
  elapsedMs: number;
}

/** "1,000/1,200 tasks  2,000/s  ETA 1 s" (no rate or ETA before the first step has taken time). */
export function describeProgress({ done, total, elapsedMs }: ProgressSnapshot, noun: string): string {
  const parts = [`${count(done)}/${count(total)} ${noun}`];
  if (done > 0 && elapsedMs > 0) {
    const perSecond = (done * 1000) / elapsedMs;
    parts.push(`${count(perSecond)}/s`);
    if (done < total) parts.push(`ETA ${duration(((total - done) / perSecond) * 1000)}`);
  }
  return parts.join("  ");
}

export interface Progress {
  /** After a step: `done` of the total so far. */
  update(done: number): void;
  /** A line that is not progress (a retry notice): printed on a line of its own. */
  note(line: string): void;
  /** Ends the rewritten line, if any. */
  finish(): void;
}

export interface ProgressOptions {
  total: number;
  /** What is counted, plural: "tasks", "dead tasks". */
  noun: string;
  quiet?: boolean;
  now?: () => number;
}

export function startProgress(io: CliIo, { total, noun, quiet = false, now = Date.now }: ProgressOptions): Progress {
  const started = now();
  let open = false;
  const closeLine = () => {
    if (open) io.err("\n");
    open = false;
  };
  return {
    update(done) {
      if (quiet) return;
      const line = describeProgress({ done, total, elapsedMs: now() - started }, noun);
      if (io.stderrIsTTY) {
        // Carriage return, the line, then erase what a longer earlier line left.
        io.err(`\r${line}\u001b[K`);
        open = true;
      } else {
        io.err(`${line}\n`);
      }
    },
    note(line) {
      closeLine();
      io.err(`${line}\n`);
    },
    finish: closeLine,
  };
}
