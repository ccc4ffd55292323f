import { batchEmbeddedFacilitator } from '../../src/payments/schemes/batch-settlement/batch-facilitator-scheme.js';
import { exactEmbeddedFacilitator } from '../../src/payments/schemes/exact/exact-facilitator-scheme.js';

/** What the app's scheme modules give its embedded facilitator, for one built by hand. */
export const EVERY_EMBEDDED_SCHEME = [exactEmbeddedFacilitator, batchEmbeddedFacilitator];
