// `npm run build -w apps/<name>` ends with this: the app's compiled entry
// (dist/main.js) and everything it imports, our packages and node_modules
// alike, bundled into dist/bundle/. Node 20 has no compile cache, and loading
// ~1,000-1,800 separate modules (resolving, reading and compiling each) was
// most of an app's start: 0.9-1.6 s of CPU on a 2-core VM, paid by every
// process start in production and in the test suite. Bundled, a start costs
// 0.4-0.65 s.
//
// The bundle runs inside the built workspace, beside the files it came from:
// each module keeps its own location (import.meta.url, and __dirname and
// __filename in CommonJS), rewritten below relative to the bundle, so files
// read at run time (prisma/migrations, the Lua scripts, pino's transport
// worker, native addons) are found where they are, and the workspace can
// still be moved as a whole.
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import MagicString from "magic-string";
import { build } from "rolldown";

const appDir = process.cwd();
const outDir = path.join(appDir, "dist", "bundle");

/** A module's path relative to the bundle's directory (every chunk is written there), as a URL path. */
const fromBundle = (file) => path.relative(outDir, file).split(path.sep).map(encodeURIComponent).join("/");

// Every chunk starts with this: the one place that turns such a relative path
// back into a file path, at run time, from wherever the bundle is.
const BANNER = [
  'import { fileURLToPath as __bundledFileURLToPath } from "node:url";',
  "const __bundledPath = (relative) => __bundledFileURLToPath(new URL(relative, import.meta.url));",
].join("\n");

/** Whether Node would load `file` as CommonJS: .cjs, or .js under a package.json without "type": "module". */
const isCommonJs = (file) => file.endsWith(".cjs") || (file.endsWith(".js") && packageTypeOf(path.dirname(file)) !== "module");

const packageTypes = new Map();
/** The "type" of the package.json nearest `dir` ("commonjs" when none says). */
function packageTypeOf(dir) {
  let type = packageTypes.get(dir);
  if (type === undefined) {
    try {
      type = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).type ?? "commonjs";
    } catch {
      type = path.dirname(dir) === dir ? "commonjs" : packageTypeOf(path.dirname(dir));
    }
    packageTypes.set(dir, type);
  }
  return type;
}

const IMPORT_META = /\bimport\.meta\.(url|dirname|filename)\b/g;
// A free __dirname/__filename, not a property or a quoted name (Prisma's client sets globalThis["__dirname"]).
const COMMONJS_PATHS = /(?<![\w$.'"`])__(dirname|filename)(?![\w$'"`])/g;

const keepModuleLocations = {
  name: "keep-module-locations",
  transform: {
    filter: { code: /import\.meta\.(url|dirname|filename)|__dirname|__filename/ },
    handler(code, id) {
      const file = id.split("?")[0];
      if (!path.isAbsolute(file)) return null;
      const paths = { filename: `__bundledPath(${JSON.stringify(fromBundle(file))})`, dirname: `__bundledPath(${JSON.stringify(fromBundle(path.dirname(file)))})` };
      const located = new MagicString(code);
      if (isCommonJs(file)) located.replace(COMMONJS_PATHS, (_, key) => paths[key]);
      else located.replace(IMPORT_META, (_, key) => (key === "url" ? `new URL(${JSON.stringify(fromBundle(file))}, import.meta.url).href` : paths[key]));
      return located.hasChanged() ? { code: located.toString(), map: located.generateMap({ hires: true, source: file }) } : null;
    },
  },
};

await rm(outDir, { recursive: true, force: true });
await build({
  input: { main: path.join(appDir, "dist", "main.js") },
  platform: "node",
  external: [
    // Optional peers some dependencies import only when a feature is used
    // (type-graphql's class-validator, pg's pg-native): left as imports.
    "class-validator",
    "pg-native",
    // Loaded by Node as before: undici reports a 101 answer to a PUSH only
    // through an assert() without a message, whose text Node builds by
    // reading the calling file, which it can for a CommonJS file but not for
    // an ES module chunk (apps/worker/src/push/interim-answer.ts reads it).
    "undici",
  ],
  plugins: [keepModuleLocations],
  logLevel: "warn",
  output: {
    dir: outDir,
    format: "esm",
    banner: BANNER,
    // main.js holds the stop signals before it imports the rest (start.js),
    // so the rest is a chunk of its own, evaluated after; so is a dependency
    // imported only when first used (Prisma's query compiler).
    entryFileNames: "[name].js",
    chunkFileNames: "[name]-[hash].js",
    // type-graphql names GraphQL types, and errors and logs name classes, by
    // their constructor's name: a bundler's renaming must not show.
    keepNames: true,
    sourcemap: true,
  },
});
