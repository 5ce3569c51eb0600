/**
 * The exit codes, the CLI's own two errors, and the one place that turns
 * whatever a command threw into a line on stderr and an exit code.
 */
import { CommanderError } from "commander";
import { TasklaneError } from "@tasklane/sdk";
import type { CliIo } from "./io.js";
import { printable } from "./output/format.js";

export const ExitCode = {
  /** The command did what it was asked. */
  OK: 0,
  /** The operation failed (an API error, a bad input file, a watched task that did not succeed, a declined confirmation). */
  FAILED: 1,
  /** The command line was wrong: unknown command or option, a bad option value, a missing API key. Nothing was sent. */
  USAGE: 2,
  /** Stopped by Ctrl-C (SIGINT), after saying how far it got: 128 + 2, the shell's convention. */
  INTERRUPTED: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A command line that cannot run as given; nothing was sent. Exit 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** How --json names a Ctrl-C on stderr (commands that stopped part-way add how far they got). */
export const INTERRUPTED_ERROR = { code: "INTERRUPTED", message: "stopped by Ctrl-C" } as const;

/** The user pressed Ctrl-C (at a question, or the cause of a submit run stopped). Exit 130. */
export class Interrupted extends Error {
  constructor() {
    super("interrupted");
    this.name = "Interrupted";
  }
}

/**
 * A failure the command has already explained on stderr (a file's bad lines,
 * how far a submission got): only the exit code is left to set. Exit 1.
 */
export class ReportedFailure extends Error {
  /** FAILED, or INTERRUPTED for a run stopped by Ctrl-C. */
  readonly exitCode: ExitCode;

  constructor(message: string, options?: { cause?: unknown; exitCode?: ExitCode }) {
    super(message, options);
    this.name = "ReportedFailure";
    this.exitCode = options?.exitCode ?? ExitCode.FAILED;
  }
}

/** Prints `error` as the user should read it and answers the exit code it means. */
export function reportError(io: CliIo, error: unknown, json: boolean): ExitCode {
  if (error instanceof CommanderError) {
    // Commander has printed its message (or the help) already.
    return error.exitCode === 0 ? ExitCode.OK : ExitCode.USAGE;
  }
  if (error instanceof ReportedFailure) return error.exitCode;
  if (error instanceof Interrupted) {
    io.err(json ? `${JSON.stringify({ error: INTERRUPTED_ERROR })}\n` : "\nInterrupted.\n");
    return ExitCode.INTERRUPTED;
  }
  if (error instanceof UsageError) {
    io.err(`error: ${error.message}\n(run with --help for usage)\n`);
    return ExitCode.USAGE;
  }
  if (error instanceof TasklaneError) {
    io.err(json ? `${JSON.stringify({ error: describeTasklaneError(error) })}\n` : formatTasklaneError(error));
    return ExitCode.FAILED;
  }
  const message = error instanceof Error ? error.message : String(error);
  io.err(json ? `${JSON.stringify({ error: { code: "ERROR", message } })}\n` : `error: ${message}\n`);
  return ExitCode.FAILED;
}

interface DescribedError {
  code: string;
  message: string;
  requestId?: string;
  retryAfterSeconds?: number;
  fieldErrors?: { path: string; message: string }[];
}

/** The API error as --json prints it on stderr. */
export function describeTasklaneError(error: TasklaneError): DescribedError {
  const described: DescribedError = { code: error.code, message: error.message };
  if (error.requestId !== undefined) described.requestId = error.requestId;
  if (error.retryAfterSeconds !== undefined) described.retryAfterSeconds = error.retryAfterSeconds;
  if (error.fieldErrors.length > 0) described.fieldErrors = error.fieldErrors;
  return described;
}

/** `error: CODE: message`, then each field error on its own line, then the request id to quote to an operator. */
export function formatTasklaneError(error: TasklaneError): string {
  const lines = [`error: ${error.code}: ${printable(error.message)}`];
  for (const field of error.fieldErrors) lines.push(`  ${field.path === "" ? "input" : field.path}: ${printable(field.message)}`);
  if (error.requestId !== undefined) lines.push(`  (request ${error.requestId})`);
  return `${lines.join("\n")}\n`;
}
