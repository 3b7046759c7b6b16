# gridsync — multi-stage image: build with compilers (better-sqlite3 is a native add-on), run on a
# slim Node 24 LTS image as a non-root user. Volumes: /data (state + folders), /etc/gridsync (config).
# No tini built in: the daemon handles SIGTERM/SIGINT itself; run it with `--init` (docker run) so
# that children of hooks that outlive them are reaped (without it node is PID 1 and they stay zombies).
#   docker build -t gridsync .
#   docker run -d --init -v gridsync-data:/data -v ./gridsync.yaml:/etc/gridsync/gridsync.yaml:ro \
#     -e GRIDSYNC_API_KEY_FILE=/run/secrets/api-key -p 127.0.0.1:9464:9464 gridsync
# Node 24.18.1, not the floating 24 tag: better-sqlite3 12 compiled against 24.19+ headers aborts the
# process when a GC frees a statement outside any JavaScript context (docs/development.md).
FROM node:24.18.1-bookworm AS build
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# The workspace packages' manifests before `npm ci`: it links them into node_modules/@gridsync.
COPY package.json package-lock.json .npmrc ./
COPY packages/protocol/package.json ./packages/protocol/
COPY packages/emulator/package.json ./packages/emulator/
RUN npm ci
COPY tsconfig.base.json tsconfig.build.json ./
COPY packages ./packages
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24.18.1-bookworm-slim AS run
ENV NODE_ENV=production
WORKDIR /app
# A fixed uid/gid, so files on mounted shares belong to a known owner; match your share with
# --build-arg GRIDSYNC_UID=… --build-arg GRIDSYNC_GID=… (docs/docker.md).
ARG GRIDSYNC_UID=10001
ARG GRIDSYNC_GID=10001
RUN groupadd --system --gid "$GRIDSYNC_GID" gridsync && useradd --system --uid "$GRIDSYNC_UID" --gid gridsync --home-dir /data --shell /usr/sbin/nologin gridsync \
  && mkdir -p /data /etc/gridsync && chown gridsync:gridsync /data
COPY --from=build --chown=root:root /app/node_modules ./node_modules
COPY --from=build --chown=root:root /app/dist ./dist
# node_modules/@gridsync/* are links into packages/: the protocol and the emulator, built.
COPY --from=build --chown=root:root /app/packages ./packages
COPY --chown=root:root package.json README.md ./
COPY --chown=root:root config/docker.yaml /etc/gridsync/gridsync.yaml
USER gridsync
VOLUME ["/data"]
EXPOSE 9464
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9464/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
# Core dumps off before Node starts (a dump would hold the API key and the bearer token; Node
# cannot lower its own RLIMIT_CORE): the shell sets the limit, then exec replaces the shell with
# node, so signals reach node directly as before.
ENTRYPOINT ["/bin/sh", "-c", "ulimit -c 0 && exec node --max-semi-space-size=4 /app/dist/cli/main.js \"$@\"", "gridsync"]
CMD ["run", "-c", "/etc/gridsync/gridsync.yaml"]
