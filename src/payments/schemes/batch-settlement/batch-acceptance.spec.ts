import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { CHANNEL_CONFIG } from '../../../../test/support/payment-doubles.js';
import {
  acceptOfferedBatchPayment,
  isBatchPayment,
  type ChannelConfig,
} from './batch-acceptance.js';
import { PaymentRefusedError } from '../../paywall/offered-requirement.js';
import { MalformedPaymentError } from '../../paywall/x402-wire.js';

const exact: PaymentRequirements = {
  scheme: 'exact',
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  amount: '2000',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
  maxTimeoutSeconds: 60,
  extra: { name: 'USDC', version: '2' },
};
const batch: PaymentRequirements = {
  ...exact,
  scheme: 'batch-settlement',
  extra: {
    name: 'USDC',
    version: '2',
    receiverAuthorizer: '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266',
    withdrawDelay: 900,
    minDeposit: '20000',
  },
};
const offered = [exact, batch];
const channelConfig = CHANNEL_CONFIG;
const channelId = computeChannelId(channelConfig, batch.network);
const voucher = { channelId, maxClaimableAmount: '4000', signature: `0x${'1b'.repeat(65)}` };
const deposit = {
  amount: '20000',
  authorization: {
    erc3009Authorization: {
      validAfter: '0',
      validBefore: '1795176060',
      salt: `0x${'cd'.repeat(32)}`,
      signature: `0x${'1c'.repeat(65)}`,
    },
  },
};

function presented(payload: unknown, accepted: unknown = batch): PaymentPayload {
  return { x402Version: 2, accepted, payload } as PaymentPayload;
}

const reasonOf = (payload: unknown): string => {
  try {
    acceptOfferedBatchPayment(presented(payload), offered);
  } catch (error) {
    if (error instanceof PaymentRefusedError) return `402 ${error.reason}`;
    if (error instanceof MalformedPaymentError) return `400 ${error.message}`;
    throw error;
  }
  return 'accepted';
};

describe('acceptOfferedBatchPayment', () => {
  it('accepts a voucher and a deposit for the offered channel terms, rebuilt from the checked fields', () => {
    const accepted = acceptOfferedBatchPayment(
      presented({ type: 'voucher', channelConfig, voucher }),
      offered,
    );
    expect(accepted).toMatchObject({ kind: 'voucher', channelId, payer: channelConfig.payer });
    expect(accepted.requirement).toBe(batch);
    expect(accepted.payload.payload).toEqual({ type: 'voucher', channelConfig, voucher });
    expect(isBatchPayment(accepted.payload)).toBe(true);
    expect(
      acceptOfferedBatchPayment(
        presented({ type: 'deposit', channelConfig, voucher, deposit }),
        offered,
      ).payload.payload,
    ).toEqual({ type: 'deposit', channelConfig, voucher, deposit });
  });

  it.each([
    [{ receiver: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' }, 'receiver_mismatch'],
    [{ receiverAuthorizer: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' }, 'receiver_authorizer'],
    [{ token: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC' }, 'token_mismatch'],
    [{ withdrawDelay: 901 }, 'withdraw_delay_mismatch'],
  ] as const)('refuses a channel with other terms (%o): 402 %s', (change, reason) => {
    const config: ChannelConfig = { ...channelConfig, ...change };
    expect(
      reasonOf({
        type: 'voucher',
        channelConfig: config,
        voucher: { ...voucher, channelId: computeChannelId(config, batch.network) },
      }),
    ).toContain(`402 invalid_batch_settlement_evm_${reason}`);
  });

  it('refuses a voucher for another channel than its config, and client refund requests', () => {
    expect(
      reasonOf({
        type: 'voucher',
        channelConfig,
        voucher: { ...voucher, channelId: `0x${'01'.repeat(32)}` },
      }),
    ).toContain('402 invalid_batch_settlement_evm_channel_id_mismatch');
    expect(reasonOf({ type: 'refund', channelConfig, voucher })).toContain(
      '402 invalid_batch_settlement_evm_payload_type',
    );
  });

  it('records the channel config in its canonical EIP-55 form, and refuses an address whose mixed case is a wrong checksum', () => {
    const lowerCase = {
      ...channelConfig,
      payer: channelConfig.payer.toLowerCase(),
      payerAuthorizer: channelConfig.payerAuthorizer.toLowerCase(),
    } as ChannelConfig;
    const accepted = acceptOfferedBatchPayment(
      presented({ type: 'voucher', channelConfig: lowerCase, voucher }),
      offered,
    );
    expect((accepted.payload.payload as { channelConfig: unknown }).channelConfig).toEqual(
      channelConfig,
    );
    const wrongChecksum = { ...channelConfig, payer: channelConfig.payer.replace('Bf9', 'bF9') };
    expect(reasonOf({ type: 'voucher', channelConfig: wrongChecksum, voucher })).toContain(
      '400 payload.channelConfig.payer has a wrong EIP-55 checksum',
    );
  });

  it('refuses a voucher signature the channel contract would refuse at claim time (not 65 bytes, or high s)', () => {
    const highS = `0x${'11'.repeat(32)}${'ff'.repeat(32)}1b`;
    expect(
      reasonOf({ type: 'voucher', channelConfig, voucher: { ...voucher, signature: highS } }),
    ).toContain('402 invalid_batch_settlement_evm_voucher_signature');
    expect(
      reasonOf({
        type: 'voucher',
        channelConfig,
        voucher: { ...voucher, signature: `${voucher.signature}00` },
      }),
    ).toContain('402 invalid_batch_settlement_evm_voucher_signature');
  });

  it('refuses a channel without a payer authorizer key, whose vouchers only the payer contract could vouch for at claim time', () => {
    const contractWallet = {
      ...channelConfig,
      payerAuthorizer: '0x0000000000000000000000000000000000000000',
    } as const;
    const id = computeChannelId(contractWallet, batch.network);
    expect(
      reasonOf({
        type: 'voucher',
        channelConfig: contractWallet,
        voucher: { ...voucher, channelId: id },
      }),
    ).toContain('402 invalid_batch_settlement_evm_payer_authorizer_required');
    expect(
      reasonOf({
        type: 'deposit',
        channelConfig: contractWallet,
        voucher: { ...voucher, channelId: id },
        deposit,
      }),
    ).toContain('402 invalid_batch_settlement_evm_payer_authorizer_required');
  });

  it.each([
    [{ type: 'voucher', channelConfig, voucher, deposit }, 'unexpected field payload.deposit'],
    [{ type: 'voucher', channelConfig, voucher, extra: 1 }, 'unexpected field payload.extra'],
    [
      { type: 'voucher', channelConfig: { ...channelConfig, note: 'x' }, voucher },
      'payload.channelConfig.note',
    ],
    [
      { type: 'voucher', channelConfig, voucher: { ...voucher, maxClaimableAmount: '04000' } },
      'maxClaimableAmount',
    ],
    [
      {
        type: 'voucher',
        channelConfig,
        voucher: { ...voucher, maxClaimableAmount: (1n << 128n).toString() },
      },
      'maxClaimableAmount',
    ],
    [{ type: 'voucher', channelConfig, voucher: { ...voucher, signature: '0x1234' } }, 'signature'],
    [
      { type: 'voucher', channelConfig: { ...channelConfig, withdrawDelay: '900' }, voucher },
      'withdrawDelay',
    ],
    [
      {
        type: 'deposit',
        channelConfig,
        voucher,
        deposit: {
          ...deposit,
          authorization: { ...deposit.authorization, permit2Authorization: {} },
        },
      },
      'payload.deposit.authorization.permit2Authorization',
    ],
    [{ type: 'deposit', channelConfig, voucher, deposit: { ...deposit, amount: '0' } }, 'amount'],
    [{ type: 'claim', claims: [] }, 'payload.type'],
    [
      { type: 'voucher', channelConfig: { ...channelConfig, withdrawDelay: 2 ** 40 }, voucher },
      'withdrawDelay',
    ],
  ])('refuses a malformed payload with a 400 (%#: %s)', (payload, where) => {
    const answer = reasonOf(payload);
    expect(answer.startsWith('400 ')).toBe(true);
    expect(answer).toContain(where);
  });

  it('accepts only what is offered: an exact requirement presented as batch is refused', () => {
    expect(() =>
      acceptOfferedBatchPayment(
        presented({ type: 'voucher', channelConfig, voucher }, { ...batch, amount: '1' }),
        offered,
      ),
    ).toThrow(PaymentRefusedError);
    expect(() =>
      acceptOfferedBatchPayment(
        presented({ type: 'voucher', channelConfig, voucher }, exact),
        offered,
      ),
    ).toThrow('unsupported_scheme: exact');
  });
});
