# Exocortex container image, installed from the packed package: the tarball carries the compiled
# JavaScript and the prebuilt native core (linux-x64 and linux-arm64), so the image needs no compiler and
# no install script. In a checkout:
#   npm ci && npm pack            # → exocortex-<version>.tgz beside this file
#   docker build -t exocortex .   # or: podman build -t exocortex .
# Only the tarball enters the build context (.dockerignore). Docker cannot run on the build machines of
# this project: the file is linted in CI, and the packaging test runs the same install command.
FROM node:24-bookworm-slim
COPY exocortex-*.tgz /tmp/
RUN npm install -g --ignore-scripts --omit=dev --no-audit --no-fund /tmp/exocortex-*.tgz \
 && rm /tmp/exocortex-*.tgz \
 && npm cache clean --force \
 && groupadd --system exocortex \
 && useradd --system --gid exocortex --home /data exocortex \
 && mkdir -p /vault /data \
 && chown exocortex:exocortex /vault /data
ENV NODE_ENV=production \
    EXO_VAULT_PATH=/vault \
    EXO_DATABASE_URL=pglite:/data/db \
    EXO_SERVER_HOST=0.0.0.0 \
    EXO_SERVER_PORT=3737
USER exocortex
WORKDIR /data
VOLUME ["/vault", "/data"]
EXPOSE 3737
# server.host 0.0.0.0 requires server.publicUrl: pass EXO_SERVER_PUBLIC_URL=https://… at run time.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:3737/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["exocortex"]
CMD ["serve"]
