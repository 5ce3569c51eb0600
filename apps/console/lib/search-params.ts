/** Reading Next's searchParams (string | string[] | undefined) into plain values. */
export type SearchParams = Record<string, string | string[] | undefined>;

export function param(params: SearchParams, name: string): string | undefined {
  const value = params[name];
  const first = Array.isArray(value) ? value[0] : value;
  const trimmed = first?.trim();
  return trimmed ? trimmed : undefined;
}

export function params(params: SearchParams, name: string): string[] {
  const value = params[name];
  return (Array.isArray(value) ? value : value === undefined ? [] : [value]).map((v) => v.trim()).filter(Boolean);
}

/** A query string from the given values (undefined and empty ones left out). */
export function query(values: Record<string, string | string[] | undefined>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined && v !== "") search.append(key, v);
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}
