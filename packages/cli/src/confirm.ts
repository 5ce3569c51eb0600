/**
 * The confirmation before a command that cancels many tasks at once (queues
 * purge, dead-letters discard --all). --yes skips it; without --yes it is
 * asked on the terminal, and refused outright when standard input is not one
 * (a script or a pipe that forgot --yes must not purge by accident, nor hang).
 */
import { UsageError } from "./errors.js";
import type { CliIo } from "./io.js";

/**
 * Whether to ask before `action` (e.g. `purge queue "emails"`): false with
 * --yes; a UsageError, before anything is sent, when standard input is not a
 * terminal to ask on.
 */
export function mustConfirm(io: CliIo, yes: boolean | undefined, action: string): boolean {
  if (yes === true) return false;
  if (!io.stdinIsTTY) throw new UsageError(`refusing to ${action} without --yes: standard input is not a terminal to confirm on`);
  return true;
}

/** Asks `question` with [y/N]: true for y or yes, false for anything else. */
export async function confirmed(io: CliIo, question: string): Promise<boolean> {
  const answer = await io.ask(`${question} [y/N] `);
  return /^\s*y(es)?\s*$/i.test(answer);
}
