/** Reading server-action FormData into typed values (strings trimmed; blanks are "not given"). */
export function text(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  return trimmed === "" ? undefined : trimmed;
}

export function all(form: FormData, name: string): string[] {
  return form.getAll(name).filter((v): v is string => typeof v === "string" && v.trim() !== "");
}

export function checked(form: FormData, name: string): boolean {
  return form.get(name) === "on" || form.get(name) === "true";
}

/** A whole number, or undefined when blank; NaN when not a number (the API reports it). */
export function int(form: FormData, name: string): number | undefined {
  const raw = text(form, name);
  if (raw === undefined) return undefined;
  return /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
}

export function float(form: FormData, name: string): number | undefined {
  const raw = text(form, name);
  if (raw === undefined) return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : Number.NaN;
}
