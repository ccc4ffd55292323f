import {
  appendTransactionMessageInstructions,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase64EncodedWireTransaction,
  partiallySignTransactionMessageWithSigners,
  pipe,
  setTransactionMessageFeePayer,
  setTransactionMessageLifetimeUsingBlockhash,
  type Address,
  type Blockhash,
  type Instruction,
  type KeyPairSigner,
} from '@solana/kit';
import {
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getTransferCheckedInstruction,
} from '@solana-program/token';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { MEMO_PROGRAM_ADDRESS, SOLANA_DEVNET_CAIP2, USDC_DEVNET_ADDRESS } from '@x402/svm';
import { PaymentRefusedError } from '../../paywall/offered-requirement.js';
import { MalformedPaymentError } from '../../paywall/x402-wire.js';
import { acceptSvmPayment } from './svm-acceptance.js';

const BLOCKHASH = 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1EtWTRABZaYq6' as Blockhash;
const USDC = USDC_DEVNET_ADDRESS as Address;
/** A compute-budget instruction: its discriminator and `value` in `bytes` little-endian bytes. */
const budget = (kind: number, bytes: 4 | 8, value = 0): Instruction => {
  const data = new Uint8Array(1 + bytes);
  data[0] = kind;
  const view = new DataView(data.buffer);
  if (bytes === 4) view.setUint32(1, value, true);
  else view.setBigUint64(1, BigInt(value), true);
  return { programAddress: 'ComputeBudget111111111111111111111111111111' as Address, data };
};
const memo = (text: string): Instruction => ({
  programAddress: MEMO_PROGRAM_ADDRESS as Address,
  data: new TextEncoder().encode(text),
});

describe('acceptSvmPayment', () => {
  let feePayer: KeyPairSigner;
  let buyer: KeyPairSigner;
  let requirement: PaymentRequirements;

  const ata = async (owner: Address): Promise<Address> =>
    (await findAssociatedTokenPda({ mint: USDC, owner, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

  async function transfer(amount = 2000n, to?: Address, from = buyer): Promise<Instruction> {
    return getTransferCheckedInstruction(
      {
        source: await ata(from.address),
        mint: USDC,
        destination: to ?? (await ata(requirement.payTo as Address)),
        authority: from,
        amount,
        decimals: 6,
      },
      { programAddress: TOKEN_PROGRAM_ADDRESS },
    );
  }

  async function payload(
    instructions: readonly Instruction[],
    payer: Address = feePayer.address,
  ): Promise<PaymentPayload> {
    const message = pipe(
      createTransactionMessage({ version: 0 }),
      (m) => setTransactionMessageFeePayer(payer, m),
      (m) => appendTransactionMessageInstructions(instructions, m),
      (m) =>
        setTransactionMessageLifetimeUsingBlockhash(
          { blockhash: BLOCKHASH, lastValidBlockHeight: 100n },
          m,
        ),
    );
    const signed = await partiallySignTransactionMessageWithSigners(message);
    return {
      x402Version: 2,
      accepted: requirement,
      payload: { transaction: getBase64EncodedWireTransaction(signed) },
    };
  }

  const offered = async (...more: Instruction[]): Promise<Instruction[]> => [
    budget(2, 4),
    budget(3, 8),
    await transfer(),
    memo('0123456789abcdef'),
    ...more,
  ];

  async function refusal(presented: PaymentPayload): Promise<string> {
    const error = await acceptSvmPayment(presented, requirement).catch((e: unknown) => e);
    if (!(error instanceof PaymentRefusedError)) throw new Error('not refused');
    return error.reason;
  }

  beforeAll(async () => {
    [feePayer, buyer] = await Promise.all([generateKeyPairSigner(), generateKeyPairSigner()]);
    requirement = {
      scheme: 'exact',
      network: SOLANA_DEVNET_CAIP2,
      asset: USDC,
      amount: '2000',
      payTo: (await generateKeyPairSigner()).address,
      maxTimeoutSeconds: 60,
      extra: { feePayer: feePayer.address },
    };
  });

  it("accepts the SDK client's shape, naming the buyer, its signature and the blockhash", async () => {
    const accepted = await acceptSvmPayment(await payload(await offered()), requirement);
    expect(accepted).toMatchObject({ payer: buyer.address, feePayer: feePayer.address });
    expect(accepted.blockhash).toBe(BLOCKHASH);
    expect(accepted.payerSignature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
  });

  it('refuses another fee payer, another instruction, a second memo or a third signer', async () => {
    const other = await generateKeyPairSigner();
    expect(await refusal(await payload(await offered(), other.address))).toContain(
      'fee_payer_mismatch',
    );
    expect(await refusal(await payload(await offered(memo('again'))))).toContain(
      'extra_instruction',
    );
    const third = await transfer(1n, await ata(other.address), other);
    expect(await refusal(await payload(await offered(third)))).toContain('unexpected_signers');
  });

  it('refuses another amount and another destination', async () => {
    const [limit, price] = [budget(2, 4), budget(3, 8)];
    expect(await refusal(await payload([limit, price, await transfer(1999n)]))).toContain(
      'amount_mismatch',
    );
    const elsewhere = await transfer(2000n, await ata(buyer.address));
    expect(await refusal(await payload([limit, price, elsewhere]))).toContain('recipient_mismatch');
  });

  it('refuses a compute-unit limit or price above its cap: the fee payer would pay them', async () => {
    const signed = async (units: number, microLamports: number): Promise<PaymentPayload> =>
      payload([budget(2, 4, units), budget(3, 8, microLamports), await transfer()]);
    await expect(acceptSvmPayment(await signed(20_000, 1), requirement)).resolves.toBeDefined();
    await expect(
      acceptSvmPayment(await signed(40_000, 50_000), requirement),
    ).resolves.toBeDefined();
    expect(await refusal(await signed(40_001, 1))).toContain('compute_unit_limit_too_high');
    expect(await refusal(await signed(1_400_000, 1))).toContain('compute_unit_limit_too_high');
    expect(await refusal(await signed(20_000, 50_001))).toContain('compute_unit_price_too_high');
    expect(await refusal(await signed(1_400_000, 5_000_000))).toContain('compute_unit_limit');
    const short = [budget(2, 4), { ...budget(3, 8), data: new Uint8Array([3, 1, 0]) }];
    expect(await refusal(await payload([...short, await transfer()]))).toContain(
      'compute_unit_price_too_high',
    );
  });

  it('takes a malformed payload for a 400', async () => {
    const good = await payload(await offered());
    const extraKey = { ...good, payload: { ...good.payload, memo: 'x' } };
    await expect(acceptSvmPayment(extraKey, requirement)).rejects.toThrow(MalformedPaymentError);
    const garbage = { ...good, payload: { transaction: 'AAAA' } };
    await expect(acceptSvmPayment(garbage, requirement)).rejects.toThrow(MalformedPaymentError);
  });
});
