/**
 * A crash as one log line. Without this, an exception nobody caught (or a
 * promise rejection nobody handled, which Node raises as one) ended the
 * process with Node's own report: several lines of plain text on stderr,
 * without the app, pid or time every other line carries, which a JSON log
 * pipeline splits into unparsed fragments at exactly the moment an operator
 * needs to read them. Now it is one `fatal` line with the error (message and
 * stack under `err`) and where it came from, then exit code 1, as Node's own.
 */

/** The one log call this needs (pino's Logger has it; pino writes to stdout synchronously). */
export interface CrashLog {
  fatal(fields: object, message: string): void;
}

export function logProcessCrashes(log: CrashLog): void {
  process.on("uncaughtException", (error: Error, origin: NodeJS.UncaughtExceptionOrigin) => {
    try {
      log.fatal({ err: error, origin }, origin === "unhandledRejection" ? "crashed: a promise rejection nobody handled; exiting" : "crashed: an exception nobody caught; exiting");
    } finally {
      process.exit(1);
    }
  });
}
