/** `tasklane tasks list|get|cancel|watch|tail`. */
import type { Command } from "commander";
import { ErrorCode, TasklaneError, type TaskFilter, type TaskStatus } from "@tasklane/sdk";
import { answer, clientFor, type CliContext } from "../context.js";
import { integerIn, taskStatuses } from "../option-values.js";
import { formatTaskDetail, formatTaskTable, shownOf } from "../output/task-views.js";
import { readPages } from "../paging.js";
import { addTailCommand } from "./task-tail.js";
import { addWatchCommand } from "./task-watch.js";

/** The most `tasks list` and `dead-letters list` print. */
export const MAX_LIST_LIMIT = 10_000;

interface ListOptions {
  queue?: string;
  status?: TaskStatus[];
  type?: string;
  limit: number;
}

export function addTasksCommand(program: Command, ctx: CliContext): void {
  const tasks = program.command("tasks").description("list, read, cancel, watch and tail tasks");

  tasks
    .command("list")
    .description("the newest tasks first, filtered")
    .option("--queue <name>", "only this queue's tasks")
    .option("--status <statuses>", "only tasks in these statuses, comma-separated (e.g. QUEUED,RUNNING)", taskStatuses)
    .option("--type <type>", "only tasks of this type")
    .option("--limit <n>", `at most n tasks (1 to ${MAX_LIST_LIMIT})`, integerIn(1, MAX_LIST_LIMIT), 50)
    .addHelpText("after", "\n--json prints { totalCount, tasks: [Task, …] }: totalCount counts every match, tasks holds up to --limit.\n")
    .action(async (options: ListOptions, command: Command) => {
      const client = clientFor(ctx, command);
      const filter: TaskFilter = { queue: options.queue ?? null, status: options.status ?? null, type: options.type ?? null };
      const { nodes, totalCount } = await readPages((page) => client.tasks.list(filter, page), options.limit);
      answer(ctx, command, { totalCount, tasks: nodes }, () => (nodes.length === 0 ? "No tasks.\n" : formatTaskTable(nodes) + shownOf(nodes.length, totalCount, "tasks")));
    });

  tasks
    .command("get")
    .description("one task with its attempts")
    .argument("<id>", "the task's id")
    .action(async (id: string, _options: unknown, command: Command) => {
      const task = await clientFor(ctx, command).tasks.get(id);
      // The API answers null for an id this tenant does not have; the CLI says so as the API's mutations do.
      if (task === null) throw new TasklaneError(ErrorCode.NOT_FOUND, `Task ${id} not found`, { operation: "task" });
      answer(ctx, command, task, () => formatTaskDetail(task));
    });

  tasks
    .command("cancel")
    .description("cancel a task; a RUNNING one's worker is told on its next heartbeat")
    .argument("<id>", "the task's id")
    .action(async (id: string, _options: unknown, command: Command) => {
      const task = await clientFor(ctx, command).tasks.cancel(id);
      answer(ctx, command, task, () =>
        task.status === "CANCELLED" ? `Cancelled ${task.id}.\n` : `Cancel requested for ${task.id}: it is ${task.status}, and its worker is told on its next heartbeat.\n`,
      );
    });

  addWatchCommand(tasks, ctx);
  addTailCommand(tasks, ctx);
}
