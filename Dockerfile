# Build stage: compile TypeScript with the locked toolchain, then drop what only the build needs.
# Optional packages are the test chain (anvil): never part of the service.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --omit=optional
COPY . .
RUN npm run build && npm prune --omit=dev --omit=optional

# Runtime stage: the compiled service (dist/src) and its production dependencies; no tests,
# scripts or bench.
FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
# batch-settlement channel state without REDIS_URL (X402_BATCH_DATA_DIR): the service user's, so a
# volume mounted there starts out writable
RUN mkdir -p data/batch-settlement && chown -R node:node data
USER node
EXPOSE 3000
CMD ["node", "dist/src/main.js"]
