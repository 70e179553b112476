# Gatehouse container image: Node.js 24 on Debian 13 (trixie), whose glibc 2.38 the Node 24
# build of uWebSockets.js needs. Multi-stage: the build stage compiles the service, the console
# and the embedded store's template; the runtime stage holds production dependencies and dist/
# only, and runs as the unprivileged `node` user.
#
#   docker build -t gatehouse .
#   docker run -p 8080:8080 -p 8081:8081 -v gatehouse-data:/data gatehouse
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY console ./console
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    MANAGEMENT_HOST=0.0.0.0 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/bin ./bin
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
# 8080: gateway (traffic, developer portal, /mcp); 8081: management API, console, event stream.
EXPOSE 8080 8081
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8081/readyz').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main/index.js"]
