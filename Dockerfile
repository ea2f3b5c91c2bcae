# Exocortex container image. Mirrors .ci/run's install: `npm ci` builds the native addon (node-gyp,
# needs g++, make, python3) and the TypeScript. Docker cannot run on the build machines of this
# project, so keep this file in step with .ci/run by hand.

# ---- build stage: toolchain for the native addon ------------------------------------------------
FROM node:24-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ make python3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json binding.gyp tsconfig.json tsconfig.build.json ./
COPY native ./native
COPY scripts ./scripts
COPY src ./src
COPY plugins ./plugins
COPY schemas ./schemas
COPY migrations ./migrations
COPY config ./config
COPY bin ./bin
RUN npm ci && npm prune --omit=dev --ignore-scripts

# ---- runtime stage: no compiler, non-root ------------------------------------------------------
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    EXO_VAULT_PATH=/vault \
    EXO_DATABASE_URL=pglite:/data/db \
    EXO_SERVER_HOST=0.0.0.0 \
    EXO_SERVER_PORT=3737
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/build/Release ./build/Release
COPY --from=build /app/package.json ./
COPY --from=build /app/bin ./bin
COPY --from=build /app/config ./config
RUN groupadd --system exocortex && useradd --system --gid exocortex --home /app exocortex \
 && mkdir -p /vault /data && chown exocortex:exocortex /vault /data
USER exocortex
VOLUME ["/vault", "/data"]
EXPOSE 3737
# server.host 0.0.0.0 requires server.publicUrl: pass EXO_SERVER_PUBLIC_URL=https://… at run time.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:3737/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "bin/exocortex.js"]
CMD ["serve"]
