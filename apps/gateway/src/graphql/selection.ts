import type { FragmentDefinitionNode, GraphQLResolveInfo, SelectionSetNode } from "graphql";

/**
 * Whether the field being resolved asks for its child `name` (directly, or
 * through inline fragments and fragment spreads). A resolver uses it to skip
 * loading what nobody asked for: completeTasks reads the tasks back only when
 * `task` is selected.
 */
export function selectsField(info: Pick<GraphQLResolveInfo, "fieldNodes" | "fragments">, name: string): boolean {
  return info.fieldNodes.some((node) => node.selectionSet !== undefined && inSelection(node.selectionSet, name, info.fragments, new Set()));
}

function inSelection(set: SelectionSetNode, name: string, fragments: Record<string, FragmentDefinitionNode>, seen: Set<string>): boolean {
  for (const selection of set.selections) {
    if (selection.kind === "Field" && selection.name.value === name) return true;
    if (selection.kind === "InlineFragment" && inSelection(selection.selectionSet, name, fragments, seen)) return true;
    if (selection.kind === "FragmentSpread" && !seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments[selection.name.value];
      if (fragment && inSelection(fragment.selectionSet, name, fragments, seen)) return true;
    }
  }
  return false;
}

/**
 * Whether every child the field being resolved asks for (through fragments
 * too) is one of `names`: submitTasks answers from each task's id alone when
 * only `id` is asked for, and then reads no row back whole.
 */
export function selectsOnly(info: Pick<GraphQLResolveInfo, "fieldNodes" | "fragments">, names: ReadonlySet<string>): boolean {
  return info.fieldNodes.every((node) => node.selectionSet !== undefined && onlyIn(node.selectionSet, names, info.fragments, new Set()));
}

function onlyIn(set: SelectionSetNode, names: ReadonlySet<string>, fragments: Record<string, FragmentDefinitionNode>, seen: Set<string>): boolean {
  for (const selection of set.selections) {
    if (selection.kind === "Field" && !names.has(selection.name.value)) return false;
    if (selection.kind === "InlineFragment" && !onlyIn(selection.selectionSet, names, fragments, seen)) return false;
    if (selection.kind === "FragmentSpread" && !seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments[selection.name.value];
      // An unknown fragment fails validation before any resolver runs; answer the safe way anyway.
      if (!fragment || !onlyIn(fragment.selectionSet, names, fragments, seen)) return false;
    }
  }
  return true;
}
