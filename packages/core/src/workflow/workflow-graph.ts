/**
 * The dependency graph of a workflow, checked before anything is written.
 * Everything wrong is reported at once (a client fixing one problem per round
 * trip is a poor experience), each problem naming the keys involved.
 */
import { BadUserInputError, type FieldError } from "../errors.js";

export interface WorkflowNode {
  key: string;
  dependsOn?: readonly string[] | null;
}

/** Cycles beyond this many are summarised: one is enough to act on, ten is plenty. */
const MAX_CYCLES_REPORTED = 10;
/** Field errors beyond this many are summarised in one more. */
const MAX_PROBLEMS_REPORTED = 100;

/** The distinct dependencies of a task, in the order given (a repeated key is one edge). */
export function distinctDependencies(node: WorkflowNode): string[] {
  return [...new Set(node.dependsOn ?? [])];
}

/**
 * Throws BadUserInputError (with fieldErrors) listing duplicate keys, unknown
 * dependencies, self-dependencies and cycles. Returns the keys in a
 * topological order (every task after all of its dependencies; ties in input
 * order), which is also a proof that the graph is acyclic.
 */
export function validateWorkflowGraph(tasks: readonly WorkflowNode[]): string[] {
  const errors: FieldError[] = [];
  const indexOf = new Map<string, number>();
  tasks.forEach((t, i) => {
    const first = indexOf.get(t.key);
    if (first === undefined) indexOf.set(t.key, i);
    else errors.push({ path: `tasks.${i}.key`, message: `duplicate key "${t.key}" (first used by tasks.${first})` });
  });
  // Edges the graph keeps: known, not self-referencing.
  const deps = tasks.map((t, i) => {
    // Where a bad dependency is first listed, for its path: built only when one is found
    // (an indexOf per dependency made a valid join of 1,990 parents cost ~4M comparisons).
    let listed: Map<string, number> | undefined;
    const at = (dep: string) => (listed ??= firstPositions(t.dependsOn ?? [])).get(dep) as number;
    return distinctDependencies(t).filter((dep) => {
      if (dep === t.key) {
        errors.push({ path: `tasks.${i}.dependsOn.${at(dep)}`, message: `task "${t.key}" depends on itself` });
        return false;
      }
      if (!indexOf.has(dep)) {
        errors.push({ path: `tasks.${i}.dependsOn.${at(dep)}`, message: `task "${t.key}" depends on unknown key "${dep}"` });
        return false;
      }
      return true;
    });
  });
  // With duplicate keys, "the task a" is ambiguous: cycles are only looked for in a well-formed key set.
  const hasDuplicates = errors.some((e) => e.path.endsWith(".key"));
  const order = hasDuplicates ? [] : topologicalOrder(tasks, deps, indexOf, errors);
  if (errors.length > 0) throw graphError(errors);
  return order;
}

/** Each value's first index in `list`. */
function firstPositions(list: readonly string[]): Map<string, number> {
  const positions = new Map<string, number>();
  list.forEach((value, j) => {
    if (!positions.has(value)) positions.set(value, j);
  });
  return positions;
}

/** Kahn's algorithm; whatever it cannot order lies on or behind a cycle, which is then named. */
function topologicalOrder(tasks: readonly WorkflowNode[], deps: string[][], indexOf: Map<string, number>, errors: FieldError[]): string[] {
  const waiting = deps.map((d) => d.length);
  const children: number[][] = tasks.map(() => []);
  deps.forEach((d, i) => d.forEach((dep) => children[indexOf.get(dep) as number]?.push(i)));
  const ready: number[] = [];
  waiting.forEach((n, i) => {
    if (n === 0) ready.push(i);
  });
  const order: string[] = [];
  for (let head = 0; head < ready.length; head++) {
    const i = ready[head] as number;
    order.push((tasks[i] as WorkflowNode).key);
    for (const c of children[i] ?? []) {
      waiting[c] = (waiting[c] as number) - 1;
      if (waiting[c] === 0) ready.push(c);
    }
  }
  if (order.length < tasks.length) reportCycles(tasks, deps, indexOf, waiting, errors);
  return order;
}

/**
 * Every task left unordered has at least one unordered dependency, so walking
 * "first unordered dependency" from any of them must come back to a task
 * already on the walk: that loop is a cycle. Tasks merely downstream of a
 * cycle lead into one already reported and add nothing.
 */
function reportCycles(tasks: readonly WorkflowNode[], deps: string[][], indexOf: Map<string, number>, waiting: number[], errors: FieldError[]): void {
  const seen = new Set<number>();
  let reported = 0;
  let more = 0;
  for (let start = 0; start < tasks.length; start++) {
    if (waiting[start] === 0 || seen.has(start)) continue;
    const walk: number[] = [];
    const onWalk = new Map<number, number>();
    let at = start;
    while (!seen.has(at) && !onWalk.has(at)) {
      onWalk.set(at, walk.length);
      walk.push(at);
      const next = (deps[at] ?? []).map((d) => indexOf.get(d) as number).find((j) => (waiting[j] as number) > 0);
      if (next === undefined) break;
      at = next;
    }
    const loopStart = onWalk.get(at);
    walk.forEach((i) => seen.add(i));
    if (loopStart === undefined) continue;
    if (reported >= MAX_CYCLES_REPORTED) {
      more++;
      continue;
    }
    // The walk follows dependencies (child -> parent); print it in run order
    // (parent -> child), starting from the cycle's first task in input order.
    const loop = walk.slice(loopStart).reverse();
    const first = loop.indexOf(Math.min(...loop));
    const keys = [...loop.slice(first), ...loop.slice(0, first)].map((i) => (tasks[i] as WorkflowNode).key);
    errors.push({ path: `tasks.${loop[first] as number}.dependsOn`, message: `dependency cycle: ${[...keys, keys[0]].join(" -> ")}` });
    reported++;
  }
  if (more > 0) errors.push({ path: "tasks", message: `and ${more} more dependency cycle(s)` });
}

/**
 * At most MAX_PROBLEMS_REPORTED field errors, then one that counts the rest:
 * a graph of 19,900 unknown dependencies (within the edge limit) answered
 * 19,900 of them, ~1.6 MB of errors for a request a fifth of that size.
 */
function graphError(errors: FieldError[]): BadUserInputError {
  const shown = errors.slice(0, 5).map((e) => e.message);
  const rest = errors.length > shown.length ? ` (and ${errors.length - shown.length} more)` : "";
  const reported =
    errors.length > MAX_PROBLEMS_REPORTED
      ? [...errors.slice(0, MAX_PROBLEMS_REPORTED), { path: "tasks", message: `and ${errors.length - MAX_PROBLEMS_REPORTED} more problem(s)` }]
      : errors;
  return new BadUserInputError(`Invalid workflow: ${shown.join("; ")}${rest}`, reported);
}
