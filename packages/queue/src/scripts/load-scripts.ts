import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The Lua scripts live as .lua files (readable, headed by their contract)
 * beside this module's source; they are read once from src/ at load time.
 */
export function luaScript(name: string): string {
  return readFileSync(fileURLToPath(new URL(`../../src/scripts/${name}.lua`, import.meta.url)), "utf8");
}
