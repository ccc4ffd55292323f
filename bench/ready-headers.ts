/**
 * Paid calls with their payment headers made before the clock starts: the buyers' work (deposits,
 * voucher and EIP-3009 signatures) happens off the clock, and the timed loop only sends ready
 * `PAYMENT-SIGNATURE` headers over kept-alive connections, one loop per connection. What is left
 * on the clock is the service's own work per paid call, which is what a seller buys.
 *
 * - `VoucherChannel`: a channel opened by the official client (its deposit, one chain round
 *   trip), then cumulative vouchers signed natively in order, each the next one the service
 *   expects; vouchers prepared and not sent stay queued for the next run.
 * - `exactHeaders`: `exact` payments signed by the official client, one EIP-3009 nonce each.
 * - `readyLoad`: `connections` loops, each on its own connection, until the time is up or a loop
 *   runs out of headers.
 */
import http from 'node:http';
import {
  decodePaymentRequiredHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/client';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { bytesToHex, concatBytes, hexToBytes, numberToBytes, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { signDigest } from '../src/chain/ecdsa.js';
import { voucherDigest } from '../src/payments/schemes/batch-settlement/voucher-signature.js';
import type { LocalChain } from '../test/support/chain.js';
import { USDC } from '../test/support/paying-clients.js';

/** A deposit big enough for every voucher of a full run. */
const DEPOSIT = 500n * USDC;

/** A buyer's channel, opened with the official client; its vouchers signed here, in order. */
export class VoucherChannel {
  private readonly queued: string[] = [];

  private constructor(
    private readonly key: Hex,
    private readonly accepted: PaymentRequirements,
    private readonly channelConfig: unknown,
    private readonly channelId: Hex,
    private readonly chainId: number,
    /** The cumulative amount of the last voucher prepared. */
    private cumulative: bigint,
  ) {}

  /** Funds a new buyer and pays `url` once with the official client: its deposit opens the channel. */
  static async open(chain: LocalChain, url: string): Promise<VoucherChannel> {
    const key = generatePrivateKey();
    const account = privateKeyToAccount(key);
    await chain.mintUsdc(account.address, 2n * DEPOSIT);
    const sent: PaymentPayload[] = [];
    const recording: typeof fetch = async (input, init) => {
      const request = new Request(input, init);
      const header = request.headers.get('payment-signature');
      if (header !== null) sent.push(decodePaymentSignatureHeader(header));
      return fetch(request);
    };
    const scheme = new BatchSettlementEvmScheme(account, {
      rpcUrl: chain.rpcUrl,
      depositStrategy: () => DEPOSIT.toString(),
    });
    // no spend cap: the default (USD 1 per payment) would clamp the deposit
    const client = x402Client.fromConfig({
      schemes: [{ network: 'eip155:*', client: scheme }],
      spendControls: { maxAmountPerPayment: false },
    });
    const pay = wrapFetchWithPayment(recording, client);
    const response = await pay(url);
    const body = await response.text();
    const deposit = sent.at(-1);
    if (response.status !== 200 || deposit === undefined) {
      throw new Error(
        `the channel's deposit answered ${String(response.status)}: ${body.slice(0, 300)}`,
      );
    }
    const raw = deposit.payload as {
      channelConfig: { payerAuthorizer: string };
      voucher: { channelId: Hex; maxClaimableAmount: string };
    };
    if (raw.channelConfig.payerAuthorizer.toLowerCase() !== account.address.toLowerCase()) {
      throw new Error("the client's vouchers are signed by another key than the buyer's");
    }
    return new VoucherChannel(
      key,
      deposit.accepted,
      raw.channelConfig,
      raw.voucher.channelId,
      chainIdOf(deposit.accepted.network),
      BigInt(raw.voucher.maxClaimableAmount),
    );
  }

  /**
   * This channel, from its last voucher on, paying another route's `accepted` (same payee, asset
   * and network, another price); use only the returned channel from then on.
   */
  paying(accepted: PaymentRequirements): VoucherChannel {
    return new VoucherChannel(
      this.key,
      accepted,
      this.channelConfig,
      this.channelId,
      this.chainId,
      this.cumulative,
    );
  }

  /** Tops the queue up to `count` ready headers (the next cumulative amounts, signed natively). */
  prepare(count: number): void {
    const price = BigInt(this.accepted.amount);
    const key = hexToBytes(this.key);
    while (this.queued.length < count) {
      this.cumulative += price;
      const digest = voucherDigest(this.channelId, this.cumulative, this.chainId);
      const { r, s, v } = signDigest(bytesToHex(digest), key);
      const signature = bytesToHex(
        concatBytes([hexToBytes(r), hexToBytes(s), numberToBytes(v, { size: 1 })]),
      );
      this.queued.push(
        encodePaymentSignatureHeader({
          x402Version: 2,
          accepted: this.accepted,
          payload: {
            type: 'voucher',
            channelConfig: this.channelConfig,
            voucher: {
              channelId: this.channelId,
              maxClaimableAmount: this.cumulative.toString(),
              signature,
            },
          },
        }),
      );
    }
  }

  /** The next voucher in order, or undefined when the queue is empty. */
  next(): string | undefined {
    return this.queued.shift();
  }
}

/** `count` `exact` payments by `buyerKey` for the route's 402 challenge, as ready headers. */
export async function exactHeaders(
  buyerKey: Hex,
  challenge: string,
  count: number,
): Promise<string[]> {
  const required = decodePaymentRequiredHeader(challenge);
  const exactOnly = {
    ...required,
    accepts: required.accepts.filter((accept) => accept.scheme === 'exact'),
  };
  const client = new x402Client().register(
    'eip155:*',
    new ExactEvmScheme(privateKeyToAccount(buyerKey)),
  );
  const headers: string[] = [];
  for (let i = 0; i < count; i += 1) {
    headers.push(encodePaymentSignatureHeader(await client.createPaymentPayload(exactOnly)));
  }
  return headers;
}

/** What a timed load answered: latencies in ms, the receipts of paid answers, whether a loop ran dry. */
export interface ReadyLoadResult {
  readonly latencies: number[];
  readonly receipts: string[];
  readonly elapsedSeconds: number;
  readonly ranOut: boolean;
}

/**
 * One loop per entry of `headers` (a connection each, kept alive), sending GET `path` with the
 * header its source gives (`null`: none, the unpaid call) until `seconds` pass or a source runs
 * dry; every answer must have `status`.
 */
export async function readyLoad(
  url: string,
  path: string,
  headers: readonly (() => string | null | undefined)[],
  status: 200 | 402,
  seconds: number,
): Promise<ReadyLoadResult> {
  const target = new URL(url);
  const latencies: number[] = [];
  const receipts: string[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  let ranOut = false;
  await Promise.all(
    headers.map(async (nextHeader) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        while (performance.now() < until && !ranOut) {
          const header = nextHeader();
          if (header === undefined) {
            ranOut = true;
            break;
          }
          const sent = performance.now();
          const answer = await get(agent, target, path, header);
          latencies.push(performance.now() - sent);
          if (answer.status !== status) {
            throw new Error(
              `${path}: answered ${String(answer.status)}, not ${String(status)}: ${answer.body.slice(0, 300)}`,
            );
          }
          if (answer.receipt !== undefined) receipts.push(answer.receipt);
        }
      } finally {
        agent.destroy();
      }
    }),
  );
  return { latencies, receipts, elapsedSeconds: (performance.now() - started) / 1000, ranOut };
}

function get(
  agent: http.Agent,
  target: URL,
  path: string,
  paymentSignature: string | null,
): Promise<{ status: number; body: string; receipt: string | undefined }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        path,
        headers: paymentSignature === null ? {} : { 'payment-signature': paymentSignature },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          body += chunk;
        });
        response.on('end', () => {
          const receipt = response.headers['payment-response'];
          resolve({
            status: response.statusCode ?? 0,
            body,
            receipt: typeof receipt === 'string' ? receipt : undefined,
          });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

function chainIdOf(network: string): number {
  return Number(network.slice(network.indexOf(':') + 1));
}
