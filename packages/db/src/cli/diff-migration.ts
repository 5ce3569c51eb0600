/**
 * Writes the next migration from the change between the schema as of the last
 * migration (prisma/schema.snapshot.prisma) and prisma/schema.prisma, using
 * Prisma's own schema engine compiled to WebAssembly (no native engine, no
 * shadow database). Usage: npm run db:diff -- <migration_name>
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PrismaPg } from "@prisma/adapter-pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const schemaPath = path.join(root, "prisma/schema.prisma");
const snapshotPath = path.join(root, "prisma/schema.snapshot.prisma");
const migrationsDir = path.join(root, "prisma/migrations");

interface WasmApi {
  instantiate(bytes: Uint8Array, imports: Record<string, unknown>): Promise<{ instance: { exports: Record<string, unknown> } }>;
}

async function loadSchemaEngine() {
  // The package is a bundler build; on Node it has to be wired up by hand.
  let panicMessage = "";
  Reflect.set(globalThis, "PRISMA_WASM_PANIC_REGISTRY", {
    set_message(m: string) {
      panicMessage = m;
    },
    get: () => panicMessage,
  });
  const bg = await import("@prisma/schema-engine-wasm/schema_engine_bg");
  const wasmPath = fileURLToPath(import.meta.resolve("@prisma/schema-engine-wasm/schema_engine_bg").replace(/\.js$/, ".wasm"));
  const bytes = await readFile(wasmPath);
  const wasm = Reflect.get(globalThis, "WebAssembly") as WasmApi;
  const { instance } = await wasm.instantiate(bytes, { "./schema_engine_bg.js": bg });
  (bg as unknown as { __wbg_set_wasm(e: unknown): void }).__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return bg;
}

async function main(): Promise<void> {
  const name = process.argv[2];
  if (!name || !/^[a-z0-9_]+$/.test(name)) throw new Error("usage: db:diff <migration_name> (lowercase, digits, _)");
  const current = await readFile(schemaPath, "utf8");
  const previous = await readFile(snapshotPath, "utf8").catch(() => null);
  const bg = await loadSchemaEngine();
  const url = new URL(process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres");
  const adapter = new PrismaPg({ host: url.hostname, port: Number(url.port || 5432), user: url.username || "postgres", database: "postgres" });
  const engine = await bg.SchemaEngine.new({ datamodels: [["schema.prisma", current]] }, () => undefined, bindMigrationAwareSqlAdapterFactory(adapter));
  const filters = { externalTables: [], externalEnums: [] };
  const result = await engine.diff({
    from: previous ? { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content: previous }] } : { tag: "empty" },
    to: { tag: "schemaDatamodel", files: [{ path: "schema.prisma", content: current }] },
    script: true,
    exitCode: true,
    filters,
  });
  const sql = result.stdout ?? "";
  if (result.exitCode !== 2 || sql.trim() === "" || sql.includes("This is an empty migration")) {
    console.log("schema.prisma has no changes since the last migration");
    process.exit(0);
  }
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "migration.sql"), sql);
  await writeFile(snapshotPath, current);
  await writeFile(path.join(migrationsDir, "migration_lock.toml"), 'provider = "postgresql"\n');
  console.log(`wrote ${path.relative(root, dir)}/migration.sql`);
  // The engine keeps a pool open for a while after its work.
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
