import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createApp, servedOpenApiDocument } from '../../src/app.js';
import { loadConfig } from '../../src/app-config.js';

/**
 * The only variable without a default (the document does not depend on its value), and both
 * schemes, so that the 402 examples show every offer a client can meet.
 */
const DOCUMENTATION_ENV = {
  X402_PAY_TO: '0x0000000000000000000000000000000000000001',
  X402_SCHEMES: 'exact,batch-settlement',
};

/**
 * The OpenAPI document exactly as committed: generated from a default-configured app that is
 * built but never started (no facilitator or venue is contacted), with a trailing newline.
 */
export async function createOpenApiJson(): Promise<string> {
  // the channel store opens its directory when the app is built: a throwaway one
  const channels = mkdtempSync(path.join(os.tmpdir(), 'x402-openapi-channels-'));
  const env = { ...DOCUMENTATION_ENV, X402_BATCH_DATA_DIR: channels };
  try {
    const app = await createApp({ config: loadConfig(env), logger: false });
    try {
      return `${JSON.stringify(servedOpenApiDocument(app), null, 2)}\n`;
    } finally {
      await app.close();
    }
  } finally {
    rmSync(channels, { recursive: true, force: true });
  }
}
