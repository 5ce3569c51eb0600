/**
 * The command tree: the program's own options, then one module per command
 * group (src/commands/). Commander copies the exit override and the output
 * settings to each subcommand as it is added, so they are set first.
 */
import { Command, Option } from "commander";
import { addDeadLettersCommand } from "./commands/dead-letters.js";
import { addQueuesCommand } from "./commands/queues.js";
import { addSubmitCommand } from "./commands/submit.js";
import { addTasksCommand } from "./commands/tasks.js";
import { DEFAULT_URL, type CliContext } from "./context.js";

export const CLI_VERSION = "0.1.0";

const HELP = `
Exit codes: 0 done, 1 the operation failed (the API's error code and message
on stderr), 2 a usage error (nothing was sent), 130 stopped by Ctrl-C
(tasks tail, which runs until stopped: 0).
Times are UTC. A --url without a path means the gateway's /graphql.

Examples:
  export TASKLANE_API_KEY=tlk_...
  tasklane submit --queue emails --type email.send --file emails.ndjson
  tasklane tasks list --status DEAD,RETRYING --limit 20
  tasklane tasks watch task_... && echo done
  tasklane tasks tail --queue emails --json
  tasklane queues purge emails --yes
  tasklane dead-letters redrive --all --queue emails
`;

export function buildProgram(ctx: CliContext): Command {
  const program = new Command("tasklane")
    .description("Tasklane from a terminal or a script: submit tasks from files, follow them, steer queues and dead letters")
    .version(CLI_VERSION, "-V, --version")
    .addOption(new Option("--url <url>", "the gateway's GraphQL endpoint").env("TASKLANE_URL").default(DEFAULT_URL))
    .addOption(new Option("--api-key <key>", "a tenant API key (never printed)").env("TASKLANE_API_KEY"))
    .option("--json", "print JSON for scripts: one document, or one object per line for a stream (tasks watch, tasks tail)")
    .option("-q, --quiet", "no progress lines on stderr")
    .exitOverride()
    .configureOutput({ writeOut: (text) => ctx.io.out(text), writeErr: (text) => ctx.io.err(text) })
    .showHelpAfterError("(run with --help for usage)")
    .showSuggestionAfterError()
    // Each command's --help lists --url, --api-key, --json and --quiet too.
    .configureHelp({ showGlobalOptions: true })
    .addHelpText("after", HELP);
  addSubmitCommand(program, ctx);
  addTasksCommand(program, ctx);
  addQueuesCommand(program, ctx);
  addDeadLettersCommand(program, ctx);
  return program;
}
