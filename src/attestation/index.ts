/**
 * The one face of the attestation room: what a paid product imports to have its answers
 * signed. Everything else under `attestation/` is the room's own.
 */
export { Attested } from './attested.decorator.js';
export type { AttestableAnswer, AttestedClaims, AttestedValue } from './attestable-answer.js';
export { PriceAttestor } from './price-attestor.js';
