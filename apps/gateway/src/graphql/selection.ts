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
