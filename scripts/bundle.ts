/**
 * The last step of `npm run build`: bundles the compiled service (dist/src) with the packages it
 * loads at start-up into dist/bundle, which the container and `npm start` run. A few files in
 * place of ~1,700 modules (swagger alone brings 428 for a handful of helpers): every ES module
 * costs the loader several KB besides its source, and what no code path reaches is left out. After
 * the bench's loads the process holds 122-130 MB of RSS instead of 148 (docs/architecture.md,
 * "Memory").
 *
 * The bundle is the compiler's output, so decorator metadata and the swagger plugin's work are
 * already in it.
 */
import { build, type Plugin } from 'esbuild';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isEntryPoint } from './entry-point.js';

const DIST = new URL('../', import.meta.url);

/** What the bundle exports: the service itself, and the app and its settings for the bench. */
export const BUNDLE_ENTRIES = ['src/main', 'src/app', 'src/app-config'] as const;

/**
 * Left to node_modules and loaded where they are used, as without a bundle:
 * - what only one mode needs (`@coinbase/x402` in `cdp` facilitator mode, the Redis clients with
 *   shared state), which is loaded on demand and so costs nothing at start-up anyway;
 * - `swagger-ui-dist`, which serves files from its own directory;
 * - Nest's optional packages for features this service does not use (Nest loads them only for
 *   those features, and says which is missing);
 * - `reflect-metadata`, which every file of the bundle imports first (PRELUDE, below);
 * - `fastify` and what it loads, whose per-request functions `keepNames` would slow (below);
 * - and, found by the plugin below, every package with a native addon.
 * `@keyv/redis` and `redis` go together: the cache's store wraps the service's own connection.
 */
export const LEFT_TO_NODE_MODULES = [
  'reflect-metadata',
  'fastify',
  '@coinbase/x402',
  'redis',
  '@keyv/redis',
  'swagger-ui-dist',
  '@nestjs/microservices',
  '@nestjs/microservices/*',
  '@nestjs/websockets/*',
  '@nestjs/platform-express',
  '@fastify/multipart',
  '@fastify/view',
];

/**
 * The directory of the installed package a resolved file belongs to: the part of its path up to
 * the last `node_modules/name` (or `node_modules/@scope/name`).
 */
export function packageDirectory(file: string): string | undefined {
  const match = /^(.*[/\\]node_modules[/\\](?:@[^/\\]+[/\\])?[^/\\]+)/.exec(file);
  return match?.[1];
}

/** What a package loading a native addon depends on to find its binary. */
const ADDON_LOADERS = ['node-gyp-build', 'bindings', '@mapbox/node-pre-gyp', 'prebuild-install'];

/**
 * A package with a native addon: it builds one (binding.gyp), ships them built (prebuilds), or
 * depends on a loader that looks for one beside it.
 */
export function isNativeAddon(directory: string): boolean {
  if (['binding.gyp', 'prebuilds'].some((name) => existsSync(path.join(directory, name)))) {
    return true;
  }
  const manifest = JSON.parse(readFileSync(path.join(directory, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const needs = { ...manifest.dependencies, ...manifest.optionalDependencies };
  return ADDON_LOADERS.some((loader) => loader in needs);
}

/**
 * Native addons stay in node_modules: each finds its binary from its own directory, and from
 * inside the bundle it would not, and some fall back without a word to plain JavaScript
 * (`secp256k1` to elliptic: the batch voucher's signature check took 2.5x the CPU).
 */
const nativeAddonsStayInstalled: Plugin = {
  name: 'native-addons-stay-installed',
  setup(bundler) {
    bundler.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData === RESOLVING) return undefined;
      const resolved = await bundler.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: RESOLVING,
      });
      const directory = packageDirectory(resolved.path);
      if (resolved.errors.length > 0 || directory === undefined || !isNativeAddon(directory)) {
        return resolved;
      }
      return { path: args.path, external: true };
    });
  },
};

/** Marks the plugin's own resolve call, so it does not ask itself again. */
const RESOLVING = Symbol('resolving');

/**
 * Every file of the bundle starts with these. First decorator metadata's polyfill, left to
 * node_modules (LEFT_TO_NODE_MODULES): main.ts imports it before anything else, but esbuild's
 * chunks are evaluated in their own order, and a class decorated before the polyfill is loaded
 * silently gets no `design:type`. Then, inside the bundle, the CommonJS packages' `require` (of
 * Node's own modules, and of what is left to node_modules) resolves as it would from dist/bundle.
 */
const PRELUDE = `import 'reflect-metadata';
import { createRequire as __bundleRequire } from 'node:module';
const require = __bundleRequire(import.meta.url);`;

export async function bundleService(dist: URL = DIST): Promise<void> {
  await build({
    entryPoints: BUNDLE_ENTRIES.map((entry) => ({
      in: fileURLToPath(new URL(`${entry}.js`, dist)),
      out: entry.replace('src/', ''),
    })),
    outdir: fileURLToPath(new URL('bundle/', dist)),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: LEFT_TO_NODE_MODULES,
    banner: { js: PRELUDE },
    // Class names as written: bundled, tsc's decorated classes (`let X = X_1 = class X {`) have
    // their inner name renamed to `X2` so as not to shadow the outer binding, and Nest, its log
    // contexts and the OpenAPI document read names from classes (a test starts the bundle and
    // checks the names Nest logs). keepNames also re-sets the name of every function declared
    // inside another each time that one runs, which on Fastify's per-request path cost the 402
    // ~25% more CPU: Fastify stays in node_modules (LEFT_TO_NODE_MODULES).
    keepNames: true,
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    // an import nothing installed answers fails the build, naming the package and who imports it
    logLevel: 'warning',
    plugins: [nativeAddonsStayInstalled],
  });
}

if (isEntryPoint(import.meta.url)) await bundleService();
