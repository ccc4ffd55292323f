/**
 * The last step of `npm run build`: bundles the compiled service (dist/src) with the packages it
 * loads at start-up into dist/bundle, which the container and `npm start` run. One file in place
 * of ~1,700 modules (swagger alone brings 428 for a handful of helpers) leaves the process ~8-15 MB
 * less RSS: every ES module costs the loader several KB besides its source, and what no code path
 * reaches is left out (docs/architecture.md, "Memory").
 *
 * The bundle is the compiler's output, so decorator metadata and the swagger plugin's work are
 * already in it; class names are kept, because Nest and the OpenAPI document use them.
 */
import { build } from 'esbuild';
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
 *   those features, and says which is missing).
 */
export const LEFT_TO_NODE_MODULES = [
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
 * Inside the bundle, the CommonJS packages' `require` (of Node's own modules, and of what is
 * left to node_modules) resolves as it would from dist/bundle.
 */
const REQUIRE_FOR_COMMONJS = `import { createRequire as __bundleRequire } from 'node:module';
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
    banner: { js: REQUIRE_FOR_COMMONJS },
    keepNames: true,
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    // an import nothing installed answers fails the build, naming the package and who imports it
    logLevel: 'warning',
  });
}

if (isEntryPoint(import.meta.url)) await bundleService();
