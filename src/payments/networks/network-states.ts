import { Inject, Injectable } from '@nestjs/common';
import { createSolanaRpc } from '@solana/kit';
import { createPublicClient } from 'viem';
import { jsonRpcTransport } from '../../chain/json-rpc-transport.js';
import { remoteText } from '../../common/remote-text.js';
import { PAYMENT_SETTINGS, type PaymentConfig } from '../payments.settings.js';

/** A probe must answer fast: the RPC gets this long for one eth_blockNumber (Solana: getSlot). */
export const NETWORK_PROBE_TIMEOUT_MS = 1000;
/** A network's state is asked again once it is this old; askers in between share it. */
export const NETWORK_PROBE_INTERVAL_MS = 2000;

/** What is known of one network's chain. */
export interface NetworkState {
  readonly network: string;
  /** `up`: its RPC answered; `down`: it did not; `unchecked`: no RPC configured (trusted facilitator). */
  readonly state: 'up' | 'down' | 'unchecked';
  /** Why it is down (the RPC's short message, never its URL). */
  readonly reason?: string;
  /** How long the last probe call took, answered or not. */
  readonly seconds: number;
  /** When it was last asked (ms since the epoch); 0: never. */
  readonly checkedAt: number;
}

/** One call that shows a chain's RPC answers, named for the down reason (`eth_blockNumber`). */
interface ChainCall {
  readonly method: string;
  ask(): Promise<unknown>;
}

/** An EVM chain answers eth_blockNumber. */
function evmCall(rpcUrl: string): ChainCall {
  const client = createPublicClient({
    transport: jsonRpcTransport(rpcUrl, { timeoutMs: NETWORK_PROBE_TIMEOUT_MS }),
  });
  return { method: 'eth_blockNumber', ask: () => client.getBlockNumber({ cacheTime: 0 }) };
}

/** A Solana cluster answers getSlot. */
function solanaCall(rpcUrl: string): ChainCall {
  const rpc = createSolanaRpc(rpcUrl);
  return {
    method: 'getSlot',
    ask: () => rpc.getSlot().send({ abortSignal: AbortSignal.timeout(NETWORK_PROBE_TIMEOUT_MS) }),
  };
}

/** One network's RPC, asked at most every NETWORK_PROBE_INTERVAL_MS. */
class NetworkProbe {
  readonly hasRpc: boolean;
  private last: NetworkState;
  private asking: Promise<NetworkState> | undefined;

  constructor(
    readonly network: string,
    private readonly client: ChainCall | undefined,
  ) {
    this.hasRpc = client !== undefined;
    this.last = {
      network,
      state: client === undefined ? 'unchecked' : 'up',
      seconds: 0,
      checkedAt: 0,
    };
  }

  /** The last known state at once; asked again in the background when it is old. */
  current(): NetworkState {
    if (this.stale()) void this.probe();
    return this.last;
  }

  /** A state no older than the interval (askers during an ask share it). */
  probe(): Promise<NetworkState> {
    if (!this.stale()) return Promise.resolve(this.last);
    this.asking ??= this.ask().finally(() => {
      this.asking = undefined;
    });
    return this.asking;
  }

  private stale(): boolean {
    return (
      this.client !== undefined && Date.now() - this.last.checkedAt >= NETWORK_PROBE_INTERVAL_MS
    );
  }

  private async ask(): Promise<NetworkState> {
    const client = this.client;
    if (client === undefined) return this.last;
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    try {
      await client.ask();
      this.last = { network: this.network, state: 'up', seconds: seconds(), checkedAt: Date.now() };
    } catch (error) {
      this.last = {
        network: this.network,
        state: 'down',
        reason: `${client.method} failed within ${NETWORK_PROBE_TIMEOUT_MS} ms: ${shortMessage(error)}`,
        seconds: seconds(),
        checkedAt: Date.now(),
      };
    }
    return this.last;
  }
}

/**
 * Whether each network can be sold on now: its chain's RPC (X402_RPC_URL, X402_RPC_URL_<CHAIN
 * ID>; X402_SOLANA_RPC_URL) answers `eth_blockNumber` (Solana: `getSlot`) within a second, asked at most every 2 s by whoever needs it (a
 * 402, a readiness probe, a scrape) and never on a request's clock. A network that is down is
 * left out of the 402 while another is up, and offered again once it answers; the last one is
 * never left out (its requests answer as they would, 503 when its chain cannot be reached).
 */
@Injectable()
export class NetworkStates {
  private readonly probes: readonly NetworkProbe[];
  private lastOffered: { states: NetworkState[]; networks: readonly string[] } | undefined;

  constructor(@Inject(PAYMENT_SETTINGS.token) payments: PaymentConfig) {
    const solanaRpc = payments.solana?.rpcUrl;
    this.probes = [
      ...payments.networks.map(
        ({ network, rpcUrl }) =>
          new NetworkProbe(network, rpcUrl === undefined ? undefined : evmCall(rpcUrl)),
      ),
      ...(payments.solana?.networks ?? []).map(
        ({ network }) =>
          new NetworkProbe(network, solanaRpc === undefined ? undefined : solanaCall(solanaRpc)),
      ),
    ];
  }

  /** Whether any network has a chain to check. */
  get checked(): boolean {
    return this.probes.some((probe) => probe.hasRpc);
  }

  /**
   * The networks to offer now, in X402_NETWORKS order: those not down, or all if every one is.
   * The same array while no state changed (it is asked on every 402).
   */
  offered(): readonly string[] {
    const current = this.probes.map((probe) => probe.current());
    const last = this.lastOffered;
    if (last !== undefined && current.every((state, index) => state === last.states[index])) {
      return last.networks;
    }
    const available = current.filter(({ state }) => state !== 'down').map(({ network }) => network);
    const networks = available.length === 0 ? this.probes.map((probe) => probe.network) : available;
    this.lastOffered = { states: current, networks };
    return networks;
  }

  /** Every network's state, fresh within the interval. */
  states(): Promise<NetworkState[]> {
    return Promise.all(this.probes.map((probe) => probe.probe()));
  }
}

/** viem's short message, as remote text: its long one names the RPC URL, which can carry a key. */
function shortMessage(error: unknown): string {
  if (error !== null && typeof error === 'object' && 'shortMessage' in error) {
    return remoteText(error.shortMessage);
  }
  return error instanceof Error ? error.name : 'error';
}
