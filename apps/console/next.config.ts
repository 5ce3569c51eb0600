import path from "node:path";
import type { NextConfig } from "next";

// The monorepo root holds the lockfile and the hoisted node_modules; naming it
// keeps Turbopack from guessing (and warning about) the workspace root.
const monorepoRoot = path.join(__dirname, "..", "..");

const nextConfig: NextConfig = {
  turbopack: { root: monorepoRoot },
  outputFileTracingRoot: monorepoRoot,
  poweredByHeader: false,
};

export default nextConfig;
