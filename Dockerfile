# syntax=docker/dockerfile:1
# One image for every Tasklane app; the command picks the app:
#   node apps/gateway/dist/bundle/main.js | apps/scheduler/dist/bundle/main.js | apps/worker/dist/bundle/main.js
#   node apps/notifier/dist/bundle/main.js | apps/console/scripts/start.mjs | packages/db/dist/cli/migrate.js
# One image keeps the versions of all apps in lockstep, which is what the
# expand/contract migration rules in docs/operations.md assume.

# Only the package manifests (and patches/, which npm ci's postinstall applies to
# node_modules), wherever workspaces live: the npm ci layer below is
# reused until a manifest or the lockfile changes, and a new workspace needs no
# edit here (npm ci refuses a lockfile whose workspace folders are missing).
FROM node:20-slim AS manifests
WORKDIR /src
COPY . .
RUN mkdir /manifests \
 && find . -name node_modules -prune -o \( -name package.json -o -name package-lock.json \) -print \
  | xargs cp --parents -t /manifests \
 && cp -r patches /manifests/patches

FROM node:20-slim AS build
WORKDIR /app
ENV TURBO_TELEMETRY_DISABLED=1 \
    NEXT_TELEMETRY_DISABLED=1
COPY --from=manifests /manifests/ ./
RUN npm ci --no-audit --no-fund
COPY . .
# `prisma generate` (packages/db's build) needs no database and no native engine; see packages/db/package.json.
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf apps/console/.next/cache

FROM node:20-slim AS runtime
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1
WORKDIR /app
# The node user (uid 1000) ships with the image; it can write only where Next writes at run time.
COPY --from=build /app /app
RUN mkdir -p apps/console/.next/cache && chown -R node:node apps/console/.next
USER node
# Gateway 4000, console 3000, METRICS_PORT of the background apps (9464 in infra/).
EXPOSE 4000 3000 9464
CMD ["node", "--max-semi-space-size=64", "apps/gateway/dist/bundle/main.js"]
