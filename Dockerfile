# syntax=docker/dockerfile:1
# convo-bridge: receiver + worker sidecar. Build: docker build -t convo-bridge .
# Runs on the current Node LTS; the package itself supports Node >= 20.19.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# `npm install` with the committed lockfile (exact pinned versions): npm 11's `npm ci` refuses
# lockfiles that lack other platforms' optional packages (npm/cli#8805), which ours do.
# --ignore-scripts: the package's own `prepare` (the build) needs src/, copied below.
RUN npm install --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs ./scripts/
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    PORT=8080
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node config ./config
# Non-root: the official image's `node` user.
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 CMD ["node", "dist/healthcheck.js"]
# Exec form: node is PID 1 and receives SIGTERM/SIGINT itself (convo-bridge handles both and
# drains). Use `docker run --init` (or `init: true` in compose) to also reap zombies.
# The V8 heap settings of the bin launcher (src/cli.ts, measured in docs/performance.md, "V8 heap settings"):
# a bounded young generation and old space keep RSS near 135 MB under load; the growing factor of
# 1.5 keeps the bounded old space from being collected every 200 ms or so.
ENTRYPOINT ["node", "--max-old-space-size=160", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist/cli.js"]
CMD ["start", "--config", "/app/config/bridge.yaml"]
