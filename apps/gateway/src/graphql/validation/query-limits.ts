/**
 * Cheap guards against expensive documents, run with graphql's validation:
 * nesting depth and alias count, both measured with fragments expanded
 * (memoised per fragment, so a fragment spread many times costs one walk).
 * Introspection subtrees do not count for depth (their shape is fixed and
 * they are gated apart) but their aliases do.
 */
import {
  GraphQLError,
  Kind,
  type FragmentDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ASTVisitor,
} from "graphql";

export const MAX_QUERY_DEPTH = 12;
export const MAX_ALIASES = 200;

interface Measure {
  depth: number;
  aliases: number;
}

function measureDocument(fragments: Map<string, FragmentDefinitionNode>) {
  const memo = new Map<string, Measure>();
  const inProgress = new Set<string>();

  const measureSet = (set: SelectionSetNode | undefined): Measure => {
    const total: Measure = { depth: 0, aliases: 0 };
    for (const sel of set?.selections ?? []) {
      let part: Measure;
      if (sel.kind === Kind.FIELD) {
        const inner = measureSet(sel.selectionSet);
        const introspection = sel.name.value.startsWith("__");
        part = { depth: introspection ? 0 : inner.depth + 1, aliases: inner.aliases + (sel.alias ? 1 : 0) };
      } else if (sel.kind === Kind.INLINE_FRAGMENT) {
        part = measureSet(sel.selectionSet);
      } else {
        part = measureFragment(sel.name.value);
      }
      total.depth = Math.max(total.depth, part.depth);
      total.aliases += part.aliases;
    }
    return total;
  };

  const measureFragment = (name: string): Measure => {
    const known = memo.get(name);
    if (known) return known;
    const def = fragments.get(name);
    // Unknown or cyclic fragments are reported by graphql's own rules.
    if (!def || inProgress.has(name)) return { depth: 0, aliases: 0 };
    inProgress.add(name);
    const result = measureSet(def.selectionSet);
    inProgress.delete(name);
    memo.set(name, result);
    return result;
  };

  return measureSet;
}

export function QueryLimitsRule(context: ValidationContext): ASTVisitor {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const def of context.getDocument().definitions) {
    if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);
  }
  const measure = measureDocument(fragments);
  return {
    OperationDefinition(node) {
      const { depth, aliases } = measure(node.selectionSet);
      const name = node.name ? `"${node.name.value}" ` : "";
      if (depth > MAX_QUERY_DEPTH) {
        context.reportError(new GraphQLError(`Operation ${name}is nested ${depth} levels deep; the limit is ${MAX_QUERY_DEPTH}`, { nodes: [node] }));
      }
      if (aliases > MAX_ALIASES) {
        context.reportError(new GraphQLError(`Operation ${name}uses ${aliases} aliases; the limit is ${MAX_ALIASES}`, { nodes: [node] }));
      }
      return false;
    },
  };
}
