import {
  appendTransactionMessageInstructions,
  createKeyPairSignerFromPrivateKeyBytes,
  createTransactionMessage,
  getAddressEncoder,
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
import { TOKEN_PROGRAM_ADDRESS, getTransferCheckedInstruction } from '@solana-program/token';
import type { PaymentRequirements } from '@x402/core/types';
import { x402Client, wrapFetchWithPayment } from '@x402/fetch';
import { MEMO_PROGRAM_ADDRESS } from '@x402/svm';
import { ExactSvmScheme } from '@x402/svm/exact/client';
import type { SolanaRpcServer } from './solana-rpc.js';
import { USDC_DECIMALS } from './solana-vm.js';

/**
 * Solana wallets for tests: a key that can be given to the service (X402_SOLANA_FEE_PAYER_KEY),
 * a buyer holding test USDC with the official client (`@x402/fetch` + `@x402/svm`'s exact
 * client scheme), and hand-built payment transactions that differ from what was offered.
 */

/** A keypair and its 64-byte secret||public form, as X402_SOLANA_FEE_PAYER_KEY takes it. */
export async function solanaKeypair(): Promise<{ signer: KeyPairSigner; bytes: Uint8Array }> {
  const seed = crypto.getRandomValues(new Uint8Array(32));
  const signer = await createKeyPairSignerFromPrivateKeyBytes(seed);
  const bytes = new Uint8Array(64);
  bytes.set(seed);
  bytes.set(getAddressEncoder().encode(signer.address), 32);
  return { signer, bytes };
}

export interface SolanaBuyer {
  readonly signer: KeyPairSigner;
  /** The official v2 client paying on Solana devnet only. */
  readonly fetch: typeof fetch;
}

/** A buyer with `usdc` atomic units of test USDC and no SOL (the fee payer pays fees). */
export async function solanaBuyer(rpc: SolanaRpcServer, usdc: bigint): Promise<SolanaBuyer> {
  const { signer } = await solanaKeypair();
  await rpc.vm.setTokenBalance(signer.address, usdc);
  const client = x402Client.fromConfig({
    schemes: [{ network: 'solana:*', client: new ExactSvmScheme(signer, { rpcUrl: rpc.url }) }],
  });
  return { signer, fetch: wrapFetchWithPayment(fetch, client) };
}

/** How a hand-built payment departs from the offer. */
export interface PaymentChanges {
  readonly amount?: bigint;
  readonly destinationOwner?: Address;
  readonly mint?: Address;
  readonly extra?: readonly Instruction[];
  /** The compute-unit limit asked for (the SDK's client asks 20,000). */
  readonly computeUnitLimit?: number;
  /** The compute-unit price, in micro-lamports per unit (the SDK's client sets 1). */
  readonly computeUnitPrice?: number;
}

/** The transfer the SDK's client builds for `requirement`, changed as asked, signed by `buyer`. */
export async function handBuiltTransaction(
  rpc: SolanaRpcServer,
  buyer: KeyPairSigner,
  requirement: PaymentRequirements,
  changes: PaymentChanges = {},
): Promise<string> {
  const mint = changes.mint ?? (requirement.asset as Address);
  const transfer = getTransferCheckedInstruction(
    {
      source: await rpc.vm.tokenAccount(buyer.address, mint),
      mint,
      destination: await rpc.vm.tokenAccount(
        changes.destinationOwner ?? (requirement.payTo as Address),
        mint,
      ),
      authority: buyer,
      amount: changes.amount ?? BigInt(requirement.amount),
      decimals: USDC_DECIMALS,
    },
    { programAddress: TOKEN_PROGRAM_ADDRESS },
  );
  const memo: Instruction = {
    programAddress: MEMO_PROGRAM_ADDRESS as Address,
    data: new TextEncoder().encode(crypto.randomUUID().replaceAll('-', '')),
  };
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (m) => setTransactionMessageFeePayer(requirement.extra['feePayer'] as Address, m),
    (m) =>
      appendTransactionMessageInstructions(
        [
          computeBudget(2, changes.computeUnitLimit ?? 20_000, 4),
          computeBudget(3, changes.computeUnitPrice ?? 1, 8),
          transfer,
          memo,
          ...(changes.extra ?? []),
        ],
        m,
      ),
    (m) =>
      setTransactionMessageLifetimeUsingBlockhash(
        { blockhash: rpc.vm.blockhash as Blockhash, lastValidBlockHeight: rpc.vm.slot + 150n },
        m,
      ),
  );
  return getBase64EncodedWireTransaction(await partiallySignTransactionMessageWithSigners(message));
}

/** A compute-budget instruction: its discriminator and one little-endian integer. */
function computeBudget(kind: 2 | 3, value: number, bytes: 4 | 8): Instruction {
  const data = new Uint8Array(1 + bytes);
  data[0] = kind;
  const view = new DataView(data.buffer);
  if (bytes === 4) view.setUint32(1, value, true);
  else view.setBigUint64(1, BigInt(value), true);
  return { programAddress: 'ComputeBudget111111111111111111111111111111' as Address, data };
}
