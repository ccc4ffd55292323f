/**
 * The local stack's Solana side: an in-process Solana VM (litesvm's linux-x64 build, an optional
 * package) behind a loopback JSON-RPC, looking like Solana devnet (test USDC at devnet USDC's
 * mint), a fee payer for the embedded facilitator, a receiving wallet and a funded buyer whose
 * key `npm run client -- --network solana` pays with. Where the build is missing, the stack
 * sells on its EVM chain alone and says why.
 */
import { getBase58Decoder } from '@solana/kit';
import { solanaKeypair } from '../test/support/solana-buyers.js';
import { SolanaRpcServer } from '../test/support/solana-rpc.js';
import { SolanaVm } from '../test/support/solana-vm.js';

/** What the sandbox state file says about Solana, for `npm run client -- --network solana`. */
export interface SandboxSolanaState {
  readonly rpcUrl: string;
  readonly payTo: string;
  readonly buyerAddress: string;
  /** The buyer's 64-byte keypair, base58 (a wallet export); throw-away, local only. */
  readonly buyerKey: string;
}

export interface SandboxSolana {
  /** The app's Solana settings (X402_NETWORKS with solana-devnet, pay-to, RPC, fee payer). */
  readonly env: Record<string, string>;
  readonly state: SandboxSolanaState;
  readonly feePayer: string;
  readonly buyerFunds: bigint;
  close(): Promise<void>;
}

/** The fee payer's lamports: fees for a great many purchases. */
const FEE_PAYER_LAMPORTS = 100_000_000_000n;

/** The Solana side, or why there is none (the native build could not be loaded). */
export async function startSandboxSolana(buyerFunds: bigint): Promise<SandboxSolana | string> {
  let vm: SolanaVm;
  try {
    vm = new SolanaVm();
  } catch (error) {
    return `no Solana side: litesvm's native build did not load (${String(error).split('\n')[0]})`;
  }
  const rpc = await SolanaRpcServer.start(vm);
  const [feePayer, payTo, buyer] = [
    await solanaKeypair(),
    await solanaKeypair(),
    await solanaKeypair(),
  ];
  vm.airdrop(feePayer.signer.address, FEE_PAYER_LAMPORTS);
  await vm.setTokenBalance(payTo.signer.address, 0n);
  await vm.setTokenBalance(buyer.signer.address, buyerFunds);
  return {
    env: {
      X402_NETWORKS: 'base-sepolia,solana-devnet',
      X402_PAY_TO_SOLANA: payTo.signer.address,
      X402_SOLANA_RPC_URL: rpc.url,
      X402_SOLANA_FEE_PAYER_KEY: getBase58Decoder().decode(feePayer.bytes),
    },
    state: {
      rpcUrl: rpc.url,
      payTo: payTo.signer.address,
      buyerAddress: buyer.signer.address,
      buyerKey: getBase58Decoder().decode(buyer.bytes),
    },
    feePayer: feePayer.signer.address,
    buyerFunds,
    close: () => rpc.close(),
  };
}

/** The sandbox summary's Solana rows. */
export function solanaRows(solana: SandboxSolana | string): [string, string][] {
  if (typeof solana === 'string') return [['solana', solana]];
  const usdc = Number(solana.buyerFunds) / 1_000_000;
  return [
    ['solana RPC', `${solana.state.rpcUrl}  (local Solana VM, looks like Solana devnet)`],
    ['sol payTo', `${solana.state.payTo}  (its test USDC token account receives)`],
    ['fee payer', `${solana.feePayer}  (the embedded facilitator's, pays the fees)`],
    ['sol buyer', `${solana.state.buyerAddress}  (${usdc} USDC, no SOL)`],
    ['sol key', `${solana.state.buyerKey}  (THROW-AWAY LOCAL KEY)`],
  ];
}
