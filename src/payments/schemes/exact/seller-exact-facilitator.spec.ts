import { jest } from '@jest/globals';
import type { FacilitatorContext, PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { BUILDER_CODE_KEY, resetAssetContractCache, type FacilitatorEvmSigner } from '@x402/evm';
import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  authorizationUsed,
  transfer,
  type Log,
} from '../../../../test/support/eip3009-receipts.js';
import { OFFERED } from '../../../../test/support/payment-doubles.js';
import {
  signedPayment,
  type AuthorizationOverrides,
} from '../../../../test/support/x402-payloads.js';
import { exactEvmPayload, type ExactEvmAuthorization } from './payment-acceptance.js';
import { SellerExactFacilitator, refusalReason } from './seller-exact-facilitator.js';

const requirements = OFFERED;
const ASSET = OFFERED.asset as Hex;
const PAY_TO = OFFERED.payTo as Hex;
const SETTLER = '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC';
const TRANSACTION = `0x${'7e'.repeat(32)}` as const;

const buyer = privateKeyToAccount(generatePrivateKey());

/** A payment of the offer by `buyer` (hand-signed, each field can be made wrong), and its parts. */
async function paymentOf(
  overrides: AuthorizationOverrides = {},
): Promise<{ payload: PaymentPayload; signed: ExactEvmAuthorization; signature: Hex }> {
  const payload = await signedPayment(buyer, requirements, overrides);
  const { authorization, signature } = exactEvmPayload(payload.payload);
  return { payload, signed: authorization, signature };
}

type Receipt = Awaited<ReturnType<FacilitatorEvmSigner['waitForTransactionReceipt']>>;

/** A chain behind the facilitator's signer that records every call made to it. */
class RecordingSigner implements FacilitatorEvmSigner {
  readonly calls: string[] = [];
  readonly written: Parameters<FacilitatorEvmSigner['writeContract']>[0][] = [];
  send: () => Promise<Hex> = () => Promise.resolve(TRANSACTION);
  receipt: () => Promise<Receipt> = () => Promise.resolve({ status: 'success', logs: [] });
  /** The token's code; the buyer is an EOA. */
  tokenCode: Hex = '0x6080';

  getAddresses(): readonly Hex[] {
    return [SETTLER];
  }

  readContract(args: { functionName: string }): Promise<unknown> {
    this.calls.push(`readContract ${args.functionName}`);
    return Promise.reject(new Error('not expected in these tests'));
  }

  verifyTypedData(): Promise<boolean> {
    this.calls.push('verifyTypedData');
    return Promise.resolve(false);
  }

  writeContract(args: Parameters<FacilitatorEvmSigner['writeContract']>[0]): Promise<Hex> {
    this.calls.push(`writeContract ${args.functionName}`);
    this.written.push(args);
    return this.send();
  }

  sendTransaction(): Promise<Hex> {
    this.calls.push('sendTransaction');
    return Promise.reject(new Error('not expected in these tests'));
  }

  waitForTransactionReceipt(args: { hash: Hex }): Promise<Receipt> {
    this.calls.push(`waitForTransactionReceipt ${args.hash}`);
    return this.receipt();
  }

  getCode(args: { address: Hex }): Promise<Hex> {
    this.calls.push(`getCode ${args.address}`);
    return Promise.resolve(
      args.address.toLowerCase() === ASSET.toLowerCase() ? this.tokenCode : '0x',
    );
  }
}

function paidReceipt(signed: ExactEvmAuthorization, value = BigInt(signed.value)): Receipt {
  const logs: Log[] = [
    transfer(signed.from, signed.to, value, ASSET),
    authorizationUsed(signed.from, signed.nonce, ASSET),
  ];
  return { status: 'success', logs };
}

// the SDK remembers for 15 minutes, process-wide, which token addresses hold code
beforeEach(() => {
  resetAssetContractCache();
});

describe('SellerExactFacilitator: an EOA transfer that pays the offer', () => {
  it('is sent as the token’s transferWithAuthorization and proven by its receipt, the chain asked nothing else but the token’s code, once', async () => {
    const { payload, signed, signature } = await paymentOf();
    const signer = new RecordingSigner();
    signer.receipt = () => Promise.resolve(paidReceipt(signed));
    const answer = await new SellerExactFacilitator(signer).settle(payload, requirements);
    expect(answer).toEqual({
      success: true,
      transaction: TRANSACTION,
      network: requirements.network,
      payer: buyer.address,
    });
    expect(signer.calls).toEqual([
      `getCode ${ASSET}`,
      'writeContract transferWithAuthorization',
      `waitForTransactionReceipt ${TRANSACTION}`,
    ]);
    // the token's code is read once per quarter hour, not per payment
    await new SellerExactFacilitator(signer).settle(payload, requirements);
    expect(signer.calls.filter((call) => call.startsWith('getCode'))).toHaveLength(1);
    const [written] = signer.written;
    expect(written?.address).toBe(ASSET);
    const r = signature.slice(0, 66);
    const s = `0x${signature.slice(66, 130)}`;
    const v = Number.parseInt(signature.slice(130), 16);
    expect(written?.args).toEqual([
      buyer.address,
      PAY_TO,
      2000n,
      BigInt(signed.validAfter),
      BigInt(signed.validBefore),
      signed.nonce,
      v,
      r,
      s,
    ]);
    expect(written?.dataSuffix).toBeUndefined();
  });

  it('a transfer the token refuses before sending answers the SDK’s reason, naming no transaction', async () => {
    const { payload } = await paymentOf();
    const signer = new RecordingSigner();
    signer.send = () =>
      Promise.reject(
        new Error(
          'The contract function "transferWithAuthorization" reverted with the following reason:\nTestUSDC: transfer amount exceeds balance',
        ),
      );
    const answer = await new SellerExactFacilitator(signer).settle(payload, requirements);
    expect(answer).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_insufficient_balance',
      transaction: '',
      payer: buyer.address,
    });
    expect(answer.errorMessage).toMatch(/exceeds balance/);
    expect(signer.calls).toEqual([`getCode ${ASSET}`, 'writeContract transferWithAuthorization']);
  });

  it('a token address without code is refused before anything is sent, as the SDK refuses it', async () => {
    const { payload } = await paymentOf();
    const signer = new RecordingSigner();
    signer.tokenCode = '0x';
    expect(await new SellerExactFacilitator(signer).settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: 'asset_not_deployed_contract',
      transaction: '',
    });
    expect(signer.written).toEqual([]);
  });

  it.each([
    ['FiatTokenV2: authorization is used or canceled', 'invalid_exact_evm_nonce_already_used'],
    ['TestUSDC: transfer amount exceeds balance', 'invalid_exact_evm_insufficient_balance'],
    [
      'FiatTokenV2: authorization is expired',
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'FiatTokenV2: authorization is not yet valid',
      'invalid_exact_evm_payload_authorization_valid_after',
    ],
    ['FiatTokenV2: invalid signature', 'invalid_exact_evm_signature'],
    ['ERC20InsufficientBalance(0x1111, 0, 2000)', 'invalid_exact_evm_insufficient_balance'],
    ['AuthorizationExpired()', 'invalid_exact_evm_payload_authorization_valid_before'],
    ['ECDSAInvalidSignature()', 'invalid_exact_evm_signature'],
    ['InvalidSignatureS()', 'invalid_exact_evm_signature'],
    ['Blacklistable: account is blacklisted', 'invalid_exact_evm_transaction_failed'],
    ['nonce too low', 'invalid_exact_evm_transaction_failed'],
  ])('the token’s "%s" is the SDK’s %s', (message, reason) => {
    expect(refusalReason(message)).toBe(reason);
  });

  it('a receipt that does not come in time is pending; asked again, it awaits that transaction and sends nothing more', async () => {
    const { payload, signed } = await paymentOf();
    const signer = new RecordingSigner();
    signer.receipt = () => Promise.reject(new Error('receipt not found within 15000 ms'));
    const facilitator = new SellerExactFacilitator(signer);
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: 'settlement_pending',
      transaction: TRANSACTION,
    });
    // the resource server's one retry after a pending answer
    signer.receipt = () => Promise.resolve(paidReceipt(signed));
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      success: true,
      transaction: TRANSACTION,
    });
    expect(signer.written).toHaveLength(1);
    expect(signer.calls.filter((call) => call.startsWith('waitForTransactionReceipt'))).toEqual([
      `waitForTransactionReceipt ${TRANSACTION}`,
      `waitForTransactionReceipt ${TRANSACTION}`,
    ]);
  });

  it('the retry awaits the transaction sent even when the authorization is about to expire by then', async () => {
    const now = Date.now();
    const { payload, signed } = await paymentOf({
      validBefore: BigInt(Math.floor(now / 1000) + 30),
    });
    const signer = new RecordingSigner();
    signer.receipt = () => Promise.reject(new Error('receipt not found within 15000 ms'));
    const facilitator = new SellerExactFacilitator(signer);
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      errorReason: 'settlement_pending',
    });
    // the receipt wait took most of the window: the payment no longer passes the local check
    jest.useFakeTimers({ now: now + 28_000, doNotFake: ['nextTick', 'queueMicrotask'] });
    try {
      signer.receipt = () => Promise.resolve(paidReceipt(signed));
      expect(await facilitator.settle(payload, requirements)).toMatchObject({
        success: true,
        transaction: TRANSACTION,
      });
    } finally {
      jest.useRealTimers();
    }
    expect(signer.written).toHaveLength(1);
  });

  it('another authorization carrying the same signature bytes does not take over the pending transaction', async () => {
    const { payload, signed } = await paymentOf();
    const signer = new RecordingSigner();
    signer.receipt = () => Promise.reject(new Error('receipt not found within 15000 ms'));
    const facilitator = new SellerExactFacilitator(signer);
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      errorReason: 'settlement_pending',
    });
    const otherNonce = { ...signed, nonce: `0x${'66'.repeat(32)}` };
    const copy = { ...payload, payload: { ...payload.payload, authorization: otherNonce } };
    signer.receipt = () => Promise.resolve(paidReceipt(signed));
    expect(await facilitator.settle(copy, requirements)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_signature',
      transaction: '',
    });
    // the first payment's retry still finds its transaction: nothing sent twice
    expect(await facilitator.settle(payload, requirements)).toMatchObject({
      success: true,
      transaction: TRANSACTION,
    });
    expect(signer.written).toHaveLength(1);
  });

  it('a reverted transaction failed; one whose receipt does not show the payment is a mismatch', async () => {
    const { payload, signed } = await paymentOf();
    const reverted = new RecordingSigner();
    reverted.receipt = () => Promise.resolve({ ...paidReceipt(signed), status: 'reverted' });
    expect(await new SellerExactFacilitator(reverted).settle(payload, requirements)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_transaction_failed',
      transaction: TRANSACTION,
    });
    for (const receipt of [
      { status: 'success', logs: [] },
      paidReceipt(signed, 1999n),
      { status: 'success', logs: [transfer(signed.from, signed.to, 2000n, ASSET)] },
    ]) {
      const signer = new RecordingSigner();
      signer.receipt = () => Promise.resolve(receipt);
      expect(await new SellerExactFacilitator(signer).settle(payload, requirements)).toMatchObject({
        success: false,
        errorReason: 'invalid_exact_evm_transfer_event_mismatch',
        transaction: TRANSACTION,
      });
    }
  });
});

describe('SellerExactFacilitator: everything else is the SDK’s', () => {
  it('a payment that does not pay exactly the offer is refused by the SDK’s checks, nothing sent', async () => {
    const cases: [AuthorizationOverrides, string][] = [
      [{ value: 1999n }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      [{ value: 2001n }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
      [
        { to: '0x2222222222222222222222222222222222222222' },
        'invalid_exact_evm_recipient_mismatch',
      ],
      [
        { validBefore: BigInt(Math.floor(Date.now() / 1000) + 3) },
        'invalid_exact_evm_payload_authorization_valid_before',
      ],
    ];
    for (const [overrides, errorReason] of cases) {
      const { payload } = await paymentOf(overrides);
      const signer = new RecordingSigner();
      const answer = await new SellerExactFacilitator(signer).settle(payload, requirements);
      expect(answer).toMatchObject({ success: false, errorReason, transaction: '' });
      // the SDK's own verification ran (it reads the payer's code), and nothing was written
      expect(signer.calls).toContain(`getCode ${buyer.address}`);
      expect(signer.written).toEqual([]);
    }
  });

  it('a signature that is not an EOA’s canonical one goes through the SDK', async () => {
    const { payload, signature } = await paymentOf();
    const wrapped = {
      ...payload,
      payload: { ...payload.payload, signature: `${signature}${'00'.repeat(32)}` },
    };
    const signer = new RecordingSigner();
    const answer = await new SellerExactFacilitator(signer).settle(wrapped, requirements);
    expect(answer).toMatchObject({ success: false, errorReason: 'invalid_exact_evm_signature' });
    expect(signer.calls).toContain(`getCode ${buyer.address}`);
    expect(signer.written).toEqual([]);
  });

  it('a builder code to append goes through the SDK, which appends it after its own checks', async () => {
    const { payload, signed } = await paymentOf();
    const suffix = '0x62c0de';
    const context: FacilitatorContext = {
      getExtension: <T>(key: string) =>
        (key === BUILDER_CODE_KEY ? { key, buildDataSuffix: () => suffix } : undefined) as T,
    };
    const signer = new RecordingSigner();
    signer.receipt = () => Promise.resolve(paidReceipt(signed));
    const answer = await new SellerExactFacilitator(signer).settle(payload, requirements, context);
    expect(answer).toMatchObject({ success: true, transaction: TRANSACTION });
    expect(signer.calls).toContain(`getCode ${buyer.address}`);
    expect(signer.written.map((written) => written.dataSuffix)).toEqual([suffix]);
  });

  it('an offer the local check cannot read is the SDK’s to refuse, not an error', async () => {
    const { payload } = await paymentOf();
    const signer = new RecordingSigner();
    const unreadable = { ...requirements, extra: undefined } as unknown as PaymentRequirements;
    expect(await new SellerExactFacilitator(signer).settle(payload, unreadable)).toMatchObject({
      success: false,
      errorReason: 'invalid_exact_evm_missing_eip712_domain',
      transaction: '',
    });
    expect(signer.written).toEqual([]);
  });

  it('verification is the SDK’s', async () => {
    const { payload } = await paymentOf({ value: 1999n });
    const signer = new RecordingSigner();
    expect(await new SellerExactFacilitator(signer).verify(payload, requirements)).toMatchObject({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch',
    });
    expect(signer.calls).toContain(`getCode ${buyer.address}`);
  });
});
