# mcp-edge: the gateway, its default config and the example handlers.
# Node 24.22.3: the version CI runs the whole suite on (.ci/run); update both together.
# Mount your own config and handlers over /app/config and /app/handlers:
#   docker run -p 8080:8080 -v "$PWD/config:/app/config" -v "$PWD/handlers:/app/handlers" mcp-edge
FROM node:24.22.3-slim

ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080
WORKDIR /app

COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

COPY gateway ./gateway
COPY handlers ./handlers
COPY config ./config
RUN ln -s /app/gateway/bin.mjs /usr/local/bin/mcp-edge

# Handlers are TypeScript loaded at start (tsx); nothing to build. Run as the image's unprivileged user.
USER node
EXPOSE 8080
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"

ENTRYPOINT ["mcp-edge"]
CMD ["start"]
