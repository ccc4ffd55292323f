import {
  getBase58Decoder,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
} from '@solana/kit';
import { TOKEN_PROGRAM_ADDRESS, findAssociatedTokenPda } from '@solana-program/token';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { MEMO_PROGRAM_ADDRESS } from '@x402/svm';
import { isRecord } from '../../../common/json.js';
import { PaymentRefusedError } from '../../paywall/offered-requirement.js';
import { MalformedPaymentError } from '../../paywall/x402-wire.js';
import {
  MAX_COMPUTE_UNIT_LIMIT,
  MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS,
} from '../../facilitator/solana-facilitator.js';

/**
 * What an `exact` payment on Solana may be, checked before the facilitator sees it: one
 * transaction whose fee payer is the offered one, signed by exactly the fee payer and the buyer,
 * carrying exactly a compute-unit limit, a compute-unit price, one SPL `TransferChecked` of the
 * offered amount of the offered mint to the pay-to's associated token account, and at most one
 * memo (the SDK's client adds a random one so equal payments differ). Anything more is refused.
 */

const COMPUTE_BUDGET_PROGRAM = 'ComputeBudget111111111111111111111111111111';
const SET_COMPUTE_UNIT_LIMIT = 2;
const SET_COMPUTE_UNIT_PRICE = 3;
const TRANSFER_CHECKED = 12;

/** A Solana payment in exactly the offered shape. */
export interface AcceptedSvmPayment {
  readonly requirement: PaymentRequirements;
  /** The wire transaction as the buyer sent it (base64), partially signed. */
  readonly transaction: string;
  /** The bytes every signature signs. */
  readonly messageBytes: Uint8Array;
  readonly feePayer: Address;
  /** The token owner who signed the transfer. */
  readonly payer: Address;
  /** The buyer's signature (base58): one per transaction message, the payment's identity. */
  readonly payerSignature: string;
  /** The recent blockhash the transaction lives by: it can land only while this is recent. */
  readonly blockhash: string;
}

/** The payload decoded and checked against the offer; a refusal names why. */
export async function acceptSvmPayment(
  payload: PaymentPayload,
  requirement: PaymentRequirements,
): Promise<AcceptedSvmPayment> {
  const transaction = transactionOf(payload);
  const { messageBytes, signatures } = decodeTransaction(transaction);
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  const accounts = message.staticAccounts;
  if ('addressTableLookups' in message && (message.addressTableLookups?.length ?? 0) > 0) {
    refuse('address_lookup_tables: the transaction must name every account itself');
  }
  const [feePayer] = accounts;
  if (feePayer === undefined || feePayer !== requirement.extra['feePayer']) {
    refuse('fee_payer_mismatch: the fee payer is not the offered one');
  }
  if (message.header.numSignerAccounts !== 2) {
    refuse('unexpected_signers: exactly the fee payer and the buyer sign');
  }
  const program = (index: number): string | undefined =>
    accounts[message.instructions[index]?.programAddressIndex ?? -1];
  const [limit, price, transfer, ...rest] = message.instructions;
  if (
    limit?.data?.[0] !== SET_COMPUTE_UNIT_LIMIT ||
    program(0) !== COMPUTE_BUDGET_PROGRAM ||
    price?.data?.[0] !== SET_COMPUTE_UNIT_PRICE ||
    program(1) !== COMPUTE_BUDGET_PROGRAM
  ) {
    refuse('unexpected_instruction: a compute-unit limit and price come first');
  }
  const units = limit.data.length === 5 ? littleEndian(limit.data, 4) : undefined;
  if (units === undefined || units > BigInt(MAX_COMPUTE_UNIT_LIMIT)) {
    refuse(
      `compute_unit_limit_too_high: at most ${MAX_COMPUTE_UNIT_LIMIT} compute units (the fee payer pays for them)`,
    );
  }
  const unitPrice = price.data.length === 9 ? littleEndian(price.data, 8) : undefined;
  if (unitPrice === undefined || unitPrice > BigInt(MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS)) {
    refuse(
      `compute_unit_price_too_high: at most ${MAX_COMPUTE_UNIT_PRICE_MICROLAMPORTS} micro-lamports per compute unit (the fee payer pays it)`,
    );
  }
  if (transfer === undefined || program(2) !== TOKEN_PROGRAM_ADDRESS) {
    refuse('unexpected_instruction: the third instruction must be the SPL token transfer');
  }
  if (rest.length > 1 || (rest.length === 1 && program(3) !== MEMO_PROGRAM_ADDRESS)) {
    refuse('extra_instruction: the transaction carries more than the offered transfer');
  }
  const data = transfer.data;
  const [source, mint, destination, authority] = (transfer.accountIndices ?? []).map(
    (index) => accounts[index],
  );
  if (data?.length !== 10 || data[0] !== TRANSFER_CHECKED || authority === undefined) {
    refuse('unexpected_instruction: the transfer must be one TransferChecked');
  }
  if (source === undefined || transfer.accountIndices?.length !== 4) {
    refuse('unexpected_instruction: the transfer must be one TransferChecked');
  }
  if (mint !== requirement.asset) refuse('mint_mismatch: the transfer is not of the offered token');
  const [payToAccount] = await findAssociatedTokenPda({
    mint: requirement.asset as Address,
    owner: requirement.payTo as Address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  if (destination !== payToAccount) {
    refuse("recipient_mismatch: the transfer is not to the pay-to's token account");
  }
  const amount = new DataView(data.buffer, data.byteOffset + 1, 8).getBigUint64(0, true);
  if (amount.toString() !== requirement.amount) {
    refuse(`amount_mismatch: the transfer moves ${amount}, the price is ${requirement.amount}`);
  }
  if (authority === feePayer) refuse('fee_payer_transferring: the fee payer cannot pay');
  const signature = signatures[authority];
  if (signature === undefined || signature === null) {
    refuse('missing_signature: the buyer has not signed the transfer');
  }
  return {
    requirement,
    transaction,
    messageBytes: new Uint8Array(messageBytes),
    feePayer,
    payer: authority,
    payerSignature: getBase58Decoder().decode(signature),
    blockhash: message.lifetimeToken,
  };
}

/** `{ transaction }` and nothing else; a malformed payload is a 400. */
function transactionOf(payload: PaymentPayload): string {
  const inner: unknown = payload.payload;
  if (
    !isRecord(inner) ||
    Object.keys(inner).length !== 1 ||
    typeof inner['transaction'] !== 'string'
  ) {
    throw new MalformedPaymentError('an exact payload on Solana is exactly { transaction }');
  }
  return inner['transaction'];
}

function decodeTransaction(
  transaction: string,
): ReturnType<ReturnType<typeof getTransactionDecoder>['decode']> {
  try {
    return getTransactionDecoder().decode(getBase64Encoder().encode(transaction));
  } catch {
    throw new MalformedPaymentError('the transaction is not a Solana wire transaction');
  }
}

/** The unsigned little-endian integer of `bytes` bytes after an instruction's discriminator. */
function littleEndian(data: Pick<Uint8Array, 'buffer' | 'byteOffset'>, bytes: 4 | 8): bigint {
  const view = new DataView(data.buffer, data.byteOffset + 1, bytes);
  return bytes === 4 ? BigInt(view.getUint32(0, true)) : view.getBigUint64(0, true);
}

function refuse(reason: string): never {
  throw new PaymentRefusedError(`invalid_exact_svm_payload: ${reason}`);
}
