import { createApp, servedOpenApiDocument } from '../../src/app.js';
import { loadConfig } from '../../src/app-config.js';

/** The only variable without a default; the document does not depend on its value. */
const DOCUMENTATION_ENV = { X402_PAY_TO: '0x0000000000000000000000000000000000000001' };

/**
 * The OpenAPI document exactly as committed: generated from a default-configured app that is
 * built but never started (no facilitator or venue is contacted), with a trailing newline.
 */
export async function createOpenApiJson(): Promise<string> {
  const app = await createApp({ config: loadConfig(DOCUMENTATION_ENV), logger: false });
  try {
    return `${JSON.stringify(servedOpenApiDocument(app), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
