/**
 * A static cost for an operation, checked before execution
 * (plugins/query-cost.ts, and ws.ts for subscriptions), so a document cannot
 * ask for millions of rows even within the depth and alias limits:
 *
 * - every field costs 1 (so the cost is roughly how many values the answer can hold);
 * - a field with a `first` argument multiplies the cost of its selection by
 *   `first` (DEFAULT_PAGE_SIZE when omitted); when it returns a connection,
 *   the lists directly inside it (`nodes`) are that page and are not multiplied again;
 * - any other list of objects multiplies its selection by UNPAGED_LIST_SIZE;
 * - fragments count as expanded; introspection fields are free (gated apart).
 *
 * `first` comes from the literal or the request's variables. A `first` above
 * MAX_PAGE_SIZE anywhere is reported too, so no list field can serve a bigger
 * page even if its own validation forgot to check.
 */
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from "@tasklane/core";
import {
  Kind,
  getNamedType,
  getNullableType,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/**
 * Budget per operation: a full 500-task page with every Task field and its
 * attempt history (500 × (25 + 20 × 7) ≈ 83k) fits; ten such pages under
 * aliases, or runs of every schedule with their attempts, do not.
 */
export const MAX_QUERY_COST = 100_000;
/**
 * Assumed length of a list field without `first` (queues, schedules,
 * attemptHistory, …): most tasks have a handful of attempts (3 by default),
 * and tenants have tens of queues and schedules, not thousands.
 */
export const UNPAGED_LIST_SIZE = 20;

export interface OperationCost {
  cost: number;
  /** The first `first` argument above MAX_PAGE_SIZE, if any. */
  oversizedPage: { field: string; first: number } | null;
}

type Variables = Readonly<Record<string, unknown>> | undefined;

function fieldDefinition(parent: GraphQLCompositeType | undefined, name: string): GraphQLField<unknown, unknown> | undefined {
  return parent !== undefined && (isObjectType(parent) || isInterfaceType(parent)) ? parent.getFields()[name] : undefined;
}

/** The value of a field's `first` argument, or null when it has none or it is not a usable number. */
function firstArgument(field: FieldNode, variables: Variables, operation: OperationDefinitionNode): number | null {
  const arg = field.arguments?.find((a) => a.name.value === "first");
  if (arg === undefined) return null;
  const value = arg.value;
  if (value.kind === Kind.INT) return Number.parseInt(value.value, 10);
  if (value.kind !== Kind.VARIABLE) return null;
  const name = value.name.value;
  const given = variables?.[name];
  if (typeof given === "number") return given;
  const fallback = operation.variableDefinitions?.find((d) => d.variable.name.value === name)?.defaultValue;
  return fallback?.kind === Kind.INT ? Number.parseInt(fallback.value, 10) : null;
}

export function operationCost(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode, variables: Variables): OperationCost {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  const memo = new Map<string, number>();
  const inProgress = new Set<string>();
  let oversizedPage: OperationCost["oversizedPage"] = null;

  const costOfSet = (set: SelectionSetNode, parent: GraphQLCompositeType | undefined, pagedByParent: boolean): number => {
    let total = 0;
    for (const sel of set.selections) {
      if (sel.kind === Kind.FIELD) {
        total += costOfField(sel, parent, pagedByParent);
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const narrowed = sel.typeCondition ? schema.getType(sel.typeCondition.name.value) : parent;
        total += costOfSet(sel.selectionSet, isCompositeType(narrowed) ? narrowed : undefined, pagedByParent);
      } else {
        total += costOfFragment(sel.name.value, pagedByParent);
      }
    }
    return total;
  };

  const costOfField = (field: FieldNode, parent: GraphQLCompositeType | undefined, pagedByParent: boolean): number => {
    if (field.name.value.startsWith("__")) return 0;
    const def = fieldDefinition(parent, field.name.value);
    const returns = def === undefined ? undefined : getNullableType(def.type);
    const isList = returns !== undefined && isListType(returns);
    let first = firstArgument(field, variables, operation);
    if (first !== null && first > MAX_PAGE_SIZE) {
      oversizedPage ??= { field: field.name.value, first };
      first = MAX_PAGE_SIZE;
    }
    const paged = first !== null || def?.args.some((a) => a.name === "first") === true;
    if (field.selectionSet === undefined) return 1;
    const named = returns === undefined ? undefined : getNamedType(returns);
    const child = costOfSet(field.selectionSet, isCompositeType(named) ? named : undefined, paged && !isList);
    const multiplier = paged ? (first ?? DEFAULT_PAGE_SIZE) : isList && !pagedByParent ? UNPAGED_LIST_SIZE : 1;
    return 1 + Math.max(0, multiplier) * child;
  };

  const costOfFragment = (name: string, pagedByParent: boolean): number => {
    const key = `${name}:${pagedByParent}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    const def = fragments.get(name);
    // Unknown or cyclic fragments are reported by graphql's own rules.
    if (def === undefined || inProgress.has(key)) return 0;
    inProgress.add(key);
    const type = schema.getType(def.typeCondition.name.value);
    const cost = costOfSet(def.selectionSet, isCompositeType(type) ? type : undefined, pagedByParent);
    inProgress.delete(key);
    memo.set(key, cost);
    return cost;
  };

  const root = schema.getRootType(operation.operation) ?? undefined;
  const cost = costOfSet(operation.selectionSet, root, false);
  return { cost, oversizedPage };
}
