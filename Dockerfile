# Build stage: compile TypeScript and bundle it (scripts/bundle.ts) with the locked toolchain.
# Optional packages are installed here because esbuild's binary is one; the prune drops them.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --omit=optional

# Runtime stage: the built code and production dependencies only (the bundle leaves a few
# packages to node_modules: scripts/bundle.ts).
FROM node:22-bookworm-slim
ENV NODE_ENV=production
# glibc's allocator with fixed thresholds (its defaults, 128 KiB) instead of ones that rise after
# each large free: freed memory is handed back to the system instead of kept for reuse (RSS after
# the bench's loads ~10 MB lower, README, "What a request costs").
ENV MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
# V8 heap sizing (README, "What a request costs"): young-generation semi-spaces of 4 MB instead
# of V8's 16 (idle RSS ~20 MB less; 2 MB halved it again but tripled the GC pause per answer),
# and the old generation grown by 25% of what survives a full GC instead of V8's up to 4x, so
# the heap a burst of paid calls leaves behind stays near what is live (after the bench's loads
# ~155 MB instead of ~250). No allocation-site pretenuring: with young semi-spaces this small, one
# scavenge can lead V8 to allocate a hot, short-lived kind of object in the old generation, a
# decision such a small old generation keeps; the bench's product processes that turned slow for
# good (twice the CPU per 402, spent in full collections) fit that, and none has since it is off
# (docs/architecture.md, "Memory").
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=25", "--no-allocation-site-pretenuring", "dist/bundle/main.js"]
