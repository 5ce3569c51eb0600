import { describe, expect, it } from "vitest";
import { WITHHELD_REASON, withheldBodyPaths, withheldTasks } from "./withheld-bodies.js";

const withheld = (path: Array<string | number>) => ({ message: "Withheld", path, extensions: { code: "BAD_USER_INPUT", reason: WITHHELD_REASON } });

describe("withheldBodyPaths", () => {
  it("gives the paths when every error is a withheld task body", () => {
    const paths = withheldBodyPaths([withheld(["workflow", "tasks", 3, "task", "payload"]), withheld(["workflow", "tasks", 3, "task", "result"])]);
    expect(paths).toEqual([
      ["workflow", "tasks", 3, "task", "payload"],
      ["workflow", "tasks", 3, "task", "result"],
    ]);
  });

  it("is null when any error is something else, or a withheld error names another field", () => {
    expect(withheldBodyPaths([withheld(["workflow", "tasks", 0, "task", "payload"]), { message: "boom", extensions: { code: "INTERNAL_SERVER_ERROR" } }])).toBeNull();
    expect(withheldBodyPaths([withheld(["workflow", "tasks", 0, "task", "type"])])).toBeNull();
    expect(withheldBodyPaths([{ message: "no path", extensions: { reason: WITHHELD_REASON } }])).toBeNull();
    expect(withheldBodyPaths([])).toBeNull();
  });
});

describe("withheldTasks", () => {
  it("finds each task object once with the fields withheld from it", () => {
    const first = { id: "task_a", payload: null, result: null };
    const second = { id: "task_b", payload: null, result: 1 };
    const data = { workflow: { tasks: [{ key: "a", task: first }, { key: "b", task: second }] } };
    const found = withheldTasks(data, [
      ["workflow", "tasks", 0, "task", "payload"],
      ["workflow", "tasks", 0, "task", "result"],
      ["workflow", "tasks", 1, "task", "payload"],
    ]);
    expect(found?.map((t) => ({ taskId: t.taskId, fields: [...t.fields].sort(), same: t.target === (t.taskId === "task_a" ? first : second) }))).toEqual([
      { taskId: "task_a", fields: ["payload", "result"], same: true },
      { taskId: "task_b", fields: ["payload"], same: true },
    ]);
  });

  it("is null when a path does not lead to a task with an id", () => {
    expect(withheldTasks({ workflow: { tasks: [] } }, [["workflow", "tasks", 0, "task", "payload"]])).toBeNull();
    expect(withheldTasks({ workflow: { tasks: [{ task: { payload: null } }] } }, [["workflow", "tasks", 0, "task", "payload"]])).toBeNull();
  });
});
