/**
 * Places a workflow's tasks for the graph view: each task one column right of
 * its deepest dependency (its topological level), stacked within the column.
 * Pure; unknown dependency keys are ignored and a cycle (which the API
 * refuses anyway) cannot loop forever.
 */
export interface LayoutInput {
  key: string;
  dependsOn: string[];
}

export interface Placed {
  key: string;
  level: number;
  row: number;
}

export function layoutByLevel(nodes: LayoutInput[]): Placed[] {
  const byKey = new Map(nodes.map((n) => [n.key, n]));
  const levels = new Map<string, number>();
  const visiting = new Set<string>();
  const levelOf = (key: string): number => {
    const known = levels.get(key);
    if (known !== undefined) return known;
    if (visiting.has(key)) return 0;
    visiting.add(key);
    const parents = (byKey.get(key)?.dependsOn ?? []).filter((p) => byKey.has(p));
    const level = parents.length === 0 ? 0 : 1 + Math.max(...parents.map(levelOf));
    visiting.delete(key);
    levels.set(key, level);
    return level;
  };
  const rows = new Map<number, number>();
  return nodes.map((n) => {
    const level = levelOf(n.key);
    const row = rows.get(level) ?? 0;
    rows.set(level, row + 1);
    return { key: n.key, level, row };
  });
}
