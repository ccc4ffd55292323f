/** The selection parsing `src/mcp` reads from this path; the routes use ticker-selection.ts. */
export { selectionOf, type SelectionKind } from './ticker-selection.js';
