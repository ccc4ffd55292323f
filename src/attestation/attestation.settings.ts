import { IsIn, IsOptional, IsString, Matches } from 'class-validator';
import type { Hex } from 'viem';
import type { SettingsSection } from '../config/settings.js';

export const ATTESTATION_MODES = ['on', 'off'] as const;
export type AttestationMode = (typeof ATTESTATION_MODES)[number];

/**
 * Whether paid answers are signed, and with which key. `privateKey` undefined (outside
 * production only): a key made at start-up, which no other instance shares.
 */
export type AttestationConfig =
  { readonly enabled: false } | { readonly enabled: true; readonly privateKey: Hex | undefined };

class AttestationVariables {
  /** `off`: no Price-Attestation header, no signed receipts, no key needed. */
  @IsIn(ATTESTATION_MODES)
  ATTESTATION: AttestationMode = 'on';

  /** The key every instance of one service signs with; its address is the published signer. */
  @IsOptional()
  @Matches(/^0x[0-9a-fA-F]{64}$/, {
    message: 'ATTESTATION_PRIVATE_KEY must be 0x and 64 hex digits',
  })
  ATTESTATION_PRIVATE_KEY?: string;

  /** Read only to refuse a production start without a shared key. */
  @IsOptional()
  @IsString()
  NODE_ENV?: string;
}

/** The price-attestation key (ATTESTATION_PRIVATE_KEY, a secret) and the ATTESTATION switch. */
export const ATTESTATION_SETTINGS: SettingsSection<AttestationVariables, AttestationConfig> = {
  token: Symbol('AttestationSettings'),
  variables: AttestationVariables,
  secrets: ['ATTESTATION_PRIVATE_KEY'],
  build: (variables, { problems }) => {
    if (variables.ATTESTATION === 'off') return { enabled: false };
    const key = variables.ATTESTATION_PRIVATE_KEY as Hex | undefined;
    if (key === undefined && variables.NODE_ENV === 'production') {
      problems.push(
        'ATTESTATION_PRIVATE_KEY is required with NODE_ENV=production: every instance signs ' +
          'price answers with this one key (its address is what buyers verify against); set ' +
          'ATTESTATION=off to sell unsigned answers',
      );
      return undefined;
    }
    return { enabled: true, privateKey: key };
  },
};
