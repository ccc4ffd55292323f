import { readFile, writeFile } from 'node:fs/promises';
import { format, resolveConfig } from 'prettier';
import { withVenueTable } from './venue-table.js';

/** Rewrites README's Venues table from the venue definitions (`npm run venues:readme`). */
const target = new URL('../../README.md', import.meta.url);
const options = await resolveConfig(target);
const readme = withVenueTable(await readFile(target, 'utf8'));
await writeFile(target, await format(readme, { ...options, parser: 'markdown' }));
console.log(`Wrote the Venues table in ${target.pathname}`);
