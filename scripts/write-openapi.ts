import 'reflect-metadata';
import { writeFile } from 'node:fs/promises';
import { createOpenApiJson } from '../test/support/openapi-json.js';

/** Regenerates the committed openapi.json from the code (`npm run openapi`). */
const target = new URL('../../openapi.json', import.meta.url);
await writeFile(target, await createOpenApiJson());
console.log(`Wrote ${target.pathname}`);
