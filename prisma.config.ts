import { defineConfig } from "prisma/config";

// Only `prisma generate` reads this file here (migrations are applied by
// packages/db's runner), so an unset DATABASE_URL must not throw.
export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/tasklane" },
});
