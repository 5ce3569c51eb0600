import path from "node:path";
import type { NextConfig } from "next";

// The monorepo root holds the lockfile and the hoisted node_modules; naming it
// keeps Turbopack from guessing (and warning about) the workspace root.
const monorepoRoot = path.join(__dirname, "..", "..");

const nextConfig: NextConfig = {
  turbopack: { root: monorepoRoot },
  outputFileTracingRoot: monorepoRoot,
  poweredByHeader: false,
  // Loaded by Node at run time rather than bundled: @tasklane/core is the
  // workspace's own ESM package (cron maths for the schedule preview), and ws
  // has optional native add-ons a bundler cannot resolve.
  serverExternalPackages: ["@tasklane/core", "ws", "graphql-ws"],
  // Pages link app/icon.svg; this answers the browsers and tools that ask for /favicon.ico regardless.
  async rewrites() {
    return [{ source: "/favicon.ico", destination: "/icon.svg" }];
  },
};

export default nextConfig;
