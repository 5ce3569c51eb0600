import { printable } from "./format.js";

/**
 * Plain-text tables for the human output: a header row and one row per
 * record, columns padded to their widest cell, two spaces apart. No colours
 * or borders, so the output pipes cleanly into grep, cut and less.
 */

/** The longest a cell is shown; longer text (an error message, a payload) is cut with "…". */
export const MAX_CELL_WIDTH = 60;

export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [headers, ...rows].map((row) => headers.map((_, i) => cell(row[i] ?? "")));
  const widths = headers.map((_, i) => Math.max(...cells.map((row) => width(row[i] ?? ""))));
  const lines = cells.map((row) =>
    row
      .map((text, i) => (i === row.length - 1 ? text : text + " ".repeat((widths[i] ?? 0) - width(text))))
      .join("  ")
      .trimEnd(),
  );
  return `${lines.join("\n")}\n`;
}

/** One line, at most MAX_CELL_WIDTH characters. */
export function cell(text: string): string {
  const flat = printable(text.replace(/\s*[\r\n]+\s*/g, " "));
  const chars = Array.from(flat);
  return chars.length > MAX_CELL_WIDTH ? `${chars.slice(0, MAX_CELL_WIDTH - 1).join("")}…` : flat;
}

/** Characters as a terminal counts them for the text we print (code points; no wide-glyph handling). */
function width(text: string): number {
  return Array.from(text).length;
}

/** Label/value lines for one record (`tasks get`): labels padded to the longest. */
export function formatFields(fields: readonly (readonly [label: string, value: string])[]): string {
  const labelWidth = Math.max(...fields.map(([label]) => label.length));
  return fields.map(([label, value]) => `${label.padEnd(labelWidth)}  ${printable(value)}`.trimEnd()).join("\n") + "\n";
}
