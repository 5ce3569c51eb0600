/**
 * Reads one sample out of Prometheus text exposition: the first line of
 * `name` whose labels include every pair in `labels` (extra labels, such as
 * the app's default `app`, are ignored). Undefined when there is none.
 */
export function sampleValue(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = new Map([...(match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found.get(k) === v)) return Number(match[3]);
  }
  return undefined;
}
