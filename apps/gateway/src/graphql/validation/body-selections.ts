/**
 * How often an operation selects a task's payload or result, checked before
 * execution with the query cost (plugins/query-cost.ts, and ws.ts for
 * subscriptions), fragments expanded.
 *
 * Why: the answer budget (core's answer-budget.ts) bounds the bodies a page,
 * a workflow's tasks or schedules' runs read, but not how many times the
 * answer writes them out, nor single-task reads: `a: payload b: payload …`
 * under 200 aliases writes each body 200 times (a page within its 4 MiB was
 * 800 MB of JSON), and 200 aliased `task(id) { payload result }` read up to
 * 100 MB. So a selection set may hold each body field under one name only,
 * and an operation may select bodies at most MAX_BODY_SELECTIONS times: its
 * answer then holds a few pages' worth at most (4 MiB for the budgeted reads,
 * 512 KiB for each single task).
 */
import {
  Kind,
  getNamedType,
  isCompositeType,
  isInterfaceType,
  isObjectType,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/** The Task fields whose values can be large (up to 256 KiB each). */
const BODY_FIELDS = new Set(["payload", "result"]);
const TASK_TYPE = "Task";
/** Body fields one operation may select: 8 tasks' payload and result read one by one are 4 MiB. */
export const MAX_BODY_SELECTIONS = 16;

export interface BodySelections {
  /** Task.payload and Task.result selections in the operation, fragments expanded. */
  count: number;
  /** A body field one selection set asks for under two or more names, if any. */
  repeated: string | null;
}

/** One selection set's body fields by name, with the response keys they are asked under; and the count beneath it. */
interface SetBodies {
  count: number;
  keys: Map<string, Set<string>>;
}

export function bodySelections(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): BodySelections {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const memo = new Map<string, SetBodies>();
  const inProgress = new Set<string>();
  let repeated: string | null = null;

  const merge = (into: SetBodies, from: SetBodies) => {
    into.count += from.count;
    for (const [field, keys] of from.keys) {
      const known = into.keys.get(field) ?? new Set<string>();
      for (const key of keys) known.add(key);
      into.keys.set(field, known);
    }
  };

  const walkSet = (set: SelectionSetNode, parent: GraphQLCompositeType | undefined): SetBodies => {
    const here: SetBodies = { count: 0, keys: new Map() };
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        const name = sel.name.value;
        if (parent?.name === TASK_TYPE && BODY_FIELDS.has(name)) {
          here.count++;
          const keys = here.keys.get(name) ?? new Set<string>();
          keys.add(sel.alias?.value ?? name);
          here.keys.set(name, keys);
        } else if (sel.selectionSet !== undefined) {
          const def = parent !== undefined && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
          const named = def === undefined ? undefined : getNamedType(def.type);
          const child = walkSet(sel.selectionSet, isCompositeType(named) ? named : undefined);
          // The child's set is whole here (its fragments merged in): one name per body field.
          for (const [field, keys] of child.keys) if (keys.size > 1) repeated ??= field;
          here.count += child.count;
        }
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const narrowed = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        merge(here, walkSet(sel.selectionSet, isCompositeType(narrowed) ? narrowed : undefined));
      } else {
        merge(here, walkFragment(sel.name.value));
      }
    }
    return here;
  };

  const walkFragment = (name: string): SetBodies => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const def = fragments.get(name);
    // Unknown or cyclic fragments are reported by graphql's own rules.
    if (def === undefined || inProgress.has(name)) return { count: 0, keys: new Map() };
    inProgress.add(name);
    const type = schema.getType(def.typeCondition.name.value);
    const bodies = walkSet(def.selectionSet, isCompositeType(type) ? type : undefined);
    inProgress.delete(name);
    memo.set(name, bodies);
    return bodies;
  };

  const root = schema.getRootType(operation.operation) ?? undefined;
  const top = walkSet(operation.selectionSet, root);
  return { count: top.count, repeated };
}
