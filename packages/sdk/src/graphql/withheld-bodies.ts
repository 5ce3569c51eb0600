/**
 * Task bodies the gateway withheld from a bulk answer. An answer holding many
 * tasks (a workflow's, a schedule's runs) carries at most a few MiB of their
 * payloads and results; past that each withheld `payload` or `result` is null
 * with a BAD_USER_INPUT error whose extensions.reason is ANSWER_BODY_BYTES,
 * telling the client to read that task alone. The rest of the answer is whole,
 * and a mutation's work is done (submitWorkflow created the workflow), so the
 * SDK takes the answer and reads those bodies with task(id).
 */

export const WITHHELD_REASON = "ANSWER_BODY_BYTES";

type Path = ReadonlyArray<string | number>;
const BODY_FIELDS = new Set(["payload", "result"]);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The paths of `errors` when every one of them is a withheld task body
 * (and there is at least one); otherwise null: the answer failed.
 */
export function withheldBodyPaths(errors: readonly unknown[]): Path[] | null {
  const paths: Path[] = [];
  for (const error of errors) {
    if (!isRecord(error) || !isRecord(error.extensions) || error.extensions.reason !== WITHHELD_REASON) return null;
    const path = error.path;
    if (!Array.isArray(path) || path.length < 2 || !path.every((p) => typeof p === "string" || typeof p === "number")) return null;
    if (!BODY_FIELDS.has(String(path.at(-1)))) return null;
    paths.push(path as Path);
  }
  return paths.length > 0 ? paths : null;
}

/** A task object in an answer and which of its bodies were withheld. */
export interface WithheldTask {
  readonly taskId: string;
  readonly target: Record<string, unknown>;
  readonly fields: ReadonlySet<"payload" | "result">;
}

/**
 * The task objects in `data` that `paths` point into, one entry per object;
 * null when a path does not lead to a task object with an id (an answer the
 * SDK cannot mend).
 */
export function withheldTasks(data: Record<string, unknown>, paths: readonly Path[]): WithheldTask[] | null {
  const byTarget = new Map<Record<string, unknown>, { taskId: string; fields: Set<"payload" | "result"> }>();
  for (const path of paths) {
    let node: unknown = data;
    for (const step of path.slice(0, -1)) {
      if (typeof step === "number" ? !Array.isArray(node) : !isRecord(node)) return null;
      node = (node as Record<string | number, unknown>)[step];
    }
    if (!isRecord(node) || typeof node.id !== "string") return null;
    const entry = byTarget.get(node) ?? { taskId: node.id, fields: new Set() };
    entry.fields.add(path.at(-1) as "payload" | "result");
    byTarget.set(node, entry);
  }
  return [...byTarget].map(([target, { taskId, fields }]) => ({ taskId, target, fields }));
}
