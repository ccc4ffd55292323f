import { createRequire } from 'node:module';
import {
  address,
  getAddressDecoder,
  getAddressEncoder,
  getBase58Decoder,
  none,
  type Address,
} from '@solana/kit';
import {
  AccountState,
  TOKEN_PROGRAM_ADDRESS,
  findAssociatedTokenPda,
  getMintEncoder,
  getTokenDecoder,
  getTokenEncoder,
} from '@solana-program/token';

/**
 * An in-process Solana VM for tests: litesvm's native build (the `litesvm-linux-x64-gnu` npm
 * package, loaded directly: the `litesvm` wrapper lists platform builds the registry lacks) with
 * a test USDC mint at devnet USDC's address, so `solana-devnet` and its default asset work as
 * they would on devnet. The JSON-RPC face is SolanaRpcServer (solana-rpc.ts).
 */

/** Devnet USDC's mint (as `@x402/svm` knows it): the test mint is placed at this address. */
export const DEVNET_USDC = address('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU');
export const USDC_DECIMALS = 6;
const LITESVM_PACKAGE = 'litesvm-linux-x64-gnu';
const MINT_RENT = 1_461_600n;
const TOKEN_ACCOUNT_RENT = 2_039_280n;

/** The part of litesvm's native binding the tests use. */
interface NativeAccount {
  lamports(): bigint;
  data(): Uint8Array;
  owner(): Uint8Array;
  executable(): boolean;
  rentEpoch(): bigint;
}
interface NativeMeta {
  logs(): string[];
  computeUnitsConsumed(): bigint;
}
/** A landed transaction's metadata, or a simulation or failure carrying it. */
type NativeOutcome = NativeMeta | { meta(): NativeMeta };
interface NativeFailure {
  err(): unknown;
  meta(): NativeMeta;
}
interface NativeVm {
  setSigverify(on: boolean): void;
  getAccount(pubkey: Uint8Array): NativeAccount | null;
  setAccount(pubkey: Uint8Array, account: NativeAccount): void;
  getBalance(pubkey: Uint8Array): bigint | null;
  latestBlockhash(): string;
  airdrop(pubkey: Uint8Array, lamports: bigint): NativeOutcome | null;
  sendVersionedTransaction(bytes: Uint8Array): NativeOutcome;
  simulateVersionedTransaction(bytes: Uint8Array): NativeOutcome;
  expireBlockhash(): void;
}
interface NativeBinding {
  LiteSvm: new () => NativeVm;
  Account: new (
    lamports: bigint,
    data: Uint8Array,
    owner: Uint8Array,
    executable: boolean,
    rentEpoch: bigint,
  ) => NativeAccount;
  FailedTransactionMetadata: abstract new () => NativeFailure;
}

/** An account as JSON-RPC shows it. */
export interface VmAccount {
  readonly lamports: bigint;
  readonly data: Uint8Array;
  readonly owner: Address;
  readonly executable: boolean;
}

/** What running a transaction did: its fee payer's signature, and the error if it failed. */
export interface VmOutcome {
  readonly signature: string;
  readonly err: string | null;
  readonly logs: readonly string[];
  readonly unitsConsumed: bigint;
}

const addressBytes = (value: Address): Uint8Array =>
  new Uint8Array(getAddressEncoder().encode(value));

export class SolanaVm {
  private readonly native: NativeBinding;
  private readonly vm: NativeVm;
  /** Slots advance one per landed transaction (litesvm's clock stands still otherwise). */
  slot = 1n;

  constructor() {
    this.native = createRequire(import.meta.url)(LITESVM_PACKAGE) as NativeBinding;
    this.vm = new this.native.LiteSvm();
    this.createMint(DEVNET_USDC);
  }

  get blockhash(): string {
    return this.vm.latestBlockhash();
  }

  /** Makes every transaction signed before now unlandable (its blockhash is no longer recent). */
  expireBlockhash(): void {
    this.vm.expireBlockhash();
  }

  account(owner: Address): VmAccount | null {
    const account = this.vm.getAccount(addressBytes(owner));
    if (account === null) return null;
    return {
      lamports: account.lamports(),
      data: account.data(),
      owner: getAddressDecoder().decode(account.owner()),
      executable: account.executable(),
    };
  }

  lamports(owner: Address): bigint {
    return this.vm.getBalance(addressBytes(owner)) ?? 0n;
  }

  airdrop(owner: Address, lamports: bigint): void {
    this.vm.airdrop(addressBytes(owner), lamports);
  }

  /** A mint with 6 decimals, no authority to worry about, placed at `mint`. */
  createMint(mint: Address): void {
    const data = getMintEncoder().encode({
      mintAuthority: none(),
      supply: 1n << 60n,
      decimals: USDC_DECIMALS,
      isInitialized: true,
      freezeAuthority: none(),
    });
    this.put(mint, MINT_RENT, new Uint8Array(data), TOKEN_PROGRAM_ADDRESS);
  }

  /** `owner`'s associated token account for `mint`. */
  async tokenAccount(owner: Address, mint: Address = DEVNET_USDC): Promise<Address> {
    const [ata] = await findAssociatedTokenPda({
      mint,
      owner,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    return ata;
  }

  /** Gives `owner` a token account for `mint` holding `amount` atomic units (created if absent). */
  async setTokenBalance(
    owner: Address,
    amount: bigint,
    mint: Address = DEVNET_USDC,
  ): Promise<void> {
    const data = getTokenEncoder().encode({
      mint,
      owner,
      amount,
      delegate: none(),
      state: AccountState.Initialized,
      isNative: none(),
      delegatedAmount: 0n,
      closeAuthority: none(),
    });
    this.put(
      await this.tokenAccount(owner, mint),
      TOKEN_ACCOUNT_RENT,
      new Uint8Array(data),
      TOKEN_PROGRAM_ADDRESS,
    );
  }

  /** `owner`'s balance of `mint` in atomic units (0 without a token account). */
  async tokenBalance(owner: Address, mint: Address = DEVNET_USDC): Promise<bigint> {
    const account = this.account(await this.tokenAccount(owner, mint));
    return account === null ? 0n : getTokenDecoder().decode(account.data).amount;
  }

  /** Runs a signed wire transaction; a failed one changes nothing but is reported. */
  send(wire: Uint8Array): VmOutcome {
    const outcome = this.outcome(this.vm.sendVersionedTransaction(wire), wire);
    if (outcome.err === null) this.slot += 1n;
    return outcome;
  }

  /** Runs a wire transaction without keeping its effects; signatures unchecked unless asked. */
  simulate(wire: Uint8Array, sigVerify: boolean): VmOutcome {
    this.vm.setSigverify(sigVerify);
    try {
      return this.outcome(this.vm.simulateVersionedTransaction(wire), wire);
    } finally {
      this.vm.setSigverify(true);
    }
  }

  private outcome(result: NativeOutcome, wire: Uint8Array): VmOutcome {
    const failed = result instanceof this.native.FailedTransactionMetadata;
    const meta = 'meta' in result ? result.meta() : result;
    return {
      signature: firstSignature(wire),
      err: failed ? describeError(result.err()) : null,
      logs: meta.logs(),
      unitsConsumed: meta.computeUnitsConsumed(),
    };
  }

  private put(at: Address, lamports: bigint, data: Uint8Array, owner: Address): void {
    this.vm.setAccount(
      addressBytes(at),
      new this.native.Account(lamports, data, addressBytes(owner), false, 0n),
    );
  }
}

/** The transaction's id: its first signature (the fee payer's), base58. */
export function firstSignature(wire: Uint8Array): string {
  return getBase58Decoder().decode(wire.subarray(1, 65));
}

/** litesvm's error: a number (a fieldless error) or an object naming the failed instruction. */
function describeError(error: unknown): string {
  if (typeof error === 'number' || typeof error === 'string') return `TransactionError ${error}`;
  return JSON.stringify(error ?? 'TransactionFailed', (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}
