/**
 * What every command shares: the terminal (io), the options the program
 * takes before or after any command (--url, --api-key, --json, --quiet),
 * the client they make, and the exit code a command sets when it ends
 * without an error but not in success (a watched task that died).
 */
import type { Command } from "commander";
import { TasklaneClient, type FetchLike } from "@tasklane/sdk";
import { ExitCode, UsageError } from "./errors.js";
import type { CliIo } from "./io.js";
import { printJson } from "./output/print.js";

export const DEFAULT_URL = "http://127.0.0.1:4000/graphql";

/**
 * The gateway serves GraphQL at /graphql and nothing at its root, so a URL
 * without a path (http://gateway:4000) means that endpoint rather than a 404.
 */
export function graphqlEndpoint(url: string): string {
  return /^https?:\/\/[^/?#]+\/?$/i.test(url) ? `${url.replace(/\/$/, "")}/graphql` : url;
}

export interface GlobalOptions {
  url: string;
  apiKey?: string;
  json: boolean;
  quiet: boolean;
}

export interface CliContext {
  readonly io: CliIo;
  /** Requests go through this fetch instead of the SDK's HTTP client (unit tests). */
  readonly fetch?: FetchLike;
  /** Set by a command that ends without an error but not in success; 0 otherwise. */
  exitCode: ExitCode;
}

/** The program's options as seen from `command` (given before or after its name). */
export function globalsOf(command: Command): GlobalOptions {
  const all = command.optsWithGlobals<Partial<GlobalOptions>>();
  return { url: all.url ?? DEFAULT_URL, apiKey: all.apiKey, json: all.json === true, quiet: all.quiet === true };
}

/** The SDK client for `command`'s --url and --api-key; a missing key or a malformed URL is a usage error. */
export function clientFor(ctx: CliContext, command: Command): TasklaneClient {
  const { url, apiKey } = globalsOf(command);
  if (apiKey === undefined || apiKey === "") throw new UsageError("no API key: pass --api-key or set TASKLANE_API_KEY");
  try {
    return new TasklaneClient({ url: graphqlEndpoint(url), apiKey, ...(ctx.fetch ? { fetch: ctx.fetch } : {}) });
  } catch (error: unknown) {
    // The SDK refuses a URL that is not absolute http(s) with a TypeError naming it.
    if (error instanceof TypeError) throw new UsageError(`--url: ${error.message}`);
    throw error;
  }
}

/** A command's result: `value` as one JSON document with --json, otherwise the text `human` makes. */
export function answer(ctx: CliContext, command: Command, value: unknown, human: () => string): void {
  if (globalsOf(command).json) printJson(ctx.io, value);
  else ctx.io.out(human());
}
