import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/app-config.js';
import { buildOpenApiDocument } from '../../src/openapi/openapi-document.js';

/**
 * The OpenAPI document exactly as committed: generated from a default-configured app that
 * is initialised but never listens, serialised with a trailing newline.
 */
export async function createOpenApiJson(): Promise<string> {
  const app = await createApp({ config: loadConfig({}), logger: false });
  try {
    return `${JSON.stringify(buildOpenApiDocument(app), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
