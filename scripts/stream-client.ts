/**
 * `npm run client -- stream BTC,ETH --budget 0.01 [--min-move-bps N] [--max-hz N]`: buys a paid
 * price stream (docs/streams.md). The unpaid GET's 402 names the batch-settlement price of one
 * update; the official batch client signs a voucher for that requirement with the budget as its
 * amount; the stream is read as Server-Sent Events, each update printed with the running charge
 * and its attestation checked as a ticker answer's is. It stops when the budget is used up (the
 * service's `payment-required`: no top-up), when the service ends the stream, or on Ctrl-C,
 * and prints the total.
 */
import { findDefaultAsset } from '@x402/evm';
import {
  x402Client,
  x402HTTPClient,
  type PaymentRequired,
  type PaymentRequirements,
  type SchemeNetworkClient,
} from '@x402/fetch';
import { formatUnits, parseUnits } from 'viem';
import { verifyAttestation } from './answer-attestation.js';
import type { ClientOptions } from './client.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE } from './paid-get.js';
import { describeError, prettyJson } from './purchase-lines.js';
import { parseSse, type SseEvent } from './sse-lines.js';

export interface StreamCommand {
  readonly kind: 'stream';
  readonly symbols: string;
  /** USD, as typed (`0.01`). */
  readonly budget: string;
  readonly minMoveBps?: string;
  readonly maxHz?: string;
}

const FLAGS = {
  '--budget': 'budget',
  '--min-move-bps': 'minMoveBps',
  '--max-hz': 'maxHz',
} as const;

/** `stream <SYMBOLS> --budget <USD> [--min-move-bps N] [--max-hz N]`, or what is wrong with it. */
export function parseStreamArgs(args: readonly string[]): StreamCommand | string {
  const symbols: string[] = [];
  const values: Partial<Record<(typeof FLAGS)[keyof typeof FLAGS], string>> = {};
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (arg in FLAGS) {
      const value = args[index + 1];
      if (value === undefined || value.startsWith('--')) return `${arg} takes a value`;
      values[FLAGS[arg as keyof typeof FLAGS]] = value;
      index += 1;
    } else if (arg.startsWith('--')) {
      return `stream does not take ${arg}`;
    } else {
      symbols.push(...arg.split(','));
    }
  }
  if (symbols.length === 0) return 'stream takes a comma list, e.g. stream BTC,ETH --budget 0.01';
  const { budget, minMoveBps, maxHz } = values;
  if (budget === undefined) return 'stream needs --budget <USD>, e.g. --budget 0.01';
  if (!/^\$?\d+(\.\d+)?$/.test(budget))
    return `--budget takes a USD amount such as 0.01 (got "${budget}")`;
  if (minMoveBps !== undefined && !/^\d+(\.\d+)?$/.test(minMoveBps)) {
    return `--min-move-bps takes a number of basis points (got "${minMoveBps}")`;
  }
  if (maxHz !== undefined && !/^\d+(\.\d+)?$/.test(maxHz)) {
    return `--max-hz takes updates per second per symbol (got "${maxHz}")`;
  }
  return {
    kind: 'stream',
    symbols: symbols.map(encodeURIComponent).join(','),
    budget: budget.replace(/^\$/, ''),
    ...(minMoveBps === undefined ? {} : { minMoveBps }),
    ...(maxHz === undefined ? {} : { maxHz }),
  };
}

/** The fields of the events this client reads (docs/streams.md). */
interface EventData {
  readonly streamId?: string;
  readonly channelId?: string;
  readonly charged?: string;
  readonly covered?: string;
  readonly reason?: string;
  readonly timestamp?: string;
  readonly currency?: string;
  readonly price?: Record<string, number>;
  readonly attestation?: string;
}

/** What the stream delivered so far, for the closing line. */
interface Tally {
  updates: number;
  /** Atomic units charged on the channel by this stream. */
  charged: bigint;
  channelId: string;
  badAttestations: number;
  signer: string | undefined;
}

/**
 * Buys and prints the stream `command` as `scheme` pays (batch-settlement, the buyer's channel).
 * `interrupt` aborting (Ctrl-C) ends it with the total.
 */
export async function streamAndPrint(
  command: StreamCommand,
  apiUrl: string,
  scheme: SchemeNetworkClient,
  buyer: string,
  options: ClientOptions & { readonly interrupt?: AbortSignal },
): Promise<number> {
  const fetchImpl = options.fetch ?? fetch;
  const query = new URLSearchParams();
  if (command.minMoveBps !== undefined) query.set('minMoveBps', command.minMoveBps);
  if (command.maxHz !== undefined) query.set('maxHz', command.maxHz);
  const url = `${apiUrl}/v1/stream/${command.symbols}${query.size === 0 ? '' : `?${query.toString()}`}`;
  const http = new x402HTTPClient(new x402Client().register('eip155:*', scheme));
  const aborter = new AbortController();
  const onInterrupt = (): void => {
    aborter.abort();
  };
  options.interrupt?.addEventListener('abort', onInterrupt);
  try {
    const offer = await streamOffer(url, http, fetchImpl, options);
    if (typeof offer === 'number') return offer;
    const { requirement, paymentRequired } = offer;
    const budget = budgetOf(command.budget, requirement);
    if (typeof budget === 'string') {
      options.err(budget);
      return EXIT_USAGE;
    }
    options.out(
      `stream ${url}  (${buyer}): budget ${usd(budget.atomic, requirement)} = ` +
        `${budget.updates} updates at ${usd(BigInt(requirement.amount), requirement)} each`,
    );
    const accepted = { ...requirement, amount: budget.atomic.toString() };
    const payload = await http.createPaymentPayload({ ...paymentRequired, accepts: [accepted] });
    const response = await fetchImpl(url, {
      headers: { accept: 'text/event-stream', ...http.encodePaymentSignatureHeader(payload) },
      signal: aborter.signal,
    });
    if (response.status !== 200 || response.body === null) {
      options.err(`HTTP ${response.status} ${response.statusText}`);
      options.err(prettyJson(await response.text()));
      return EXIT_FAILED;
    }
    return await readStream(
      response.body,
      requirement,
      `${apiUrl}/.well-known/price-attestation`,
      {
        ...options,
        fetch: cachingInfo(fetchImpl),
      },
      aborter,
    );
  } catch (error) {
    if (aborter.signal.aborted) return EXIT_OK;
    options.err(`Stream failed: ${describeError(error)}`);
    return EXIT_FAILED;
  } finally {
    options.interrupt?.removeEventListener('abort', onInterrupt);
  }
}

/** The unpaid GET: its 402's batch-settlement requirement, or the exit code after saying why not. */
async function streamOffer(
  url: string,
  http: x402HTTPClient,
  fetchImpl: typeof fetch,
  options: ClientOptions,
): Promise<{ requirement: PaymentRequirements; paymentRequired: PaymentRequired } | number> {
  const unpaid = await fetchImpl(url, { headers: { accept: 'text/event-stream' } });
  const text = await unpaid.text();
  if (unpaid.status !== 402) {
    options.err(
      `HTTP ${unpaid.status} ${unpaid.statusText} (a stream is paid: a 402 was expected)`,
    );
    options.err(prettyJson(text));
    return EXIT_FAILED;
  }
  const paymentRequired = http.getPaymentRequiredResponse(
    (name) => unpaid.headers.get(name),
    JSON.parse(text) as unknown,
  );
  const requirement = paymentRequired.accepts.find(
    (offer) => offer.scheme === 'batch-settlement' && offer.network.startsWith('eip155:'),
  );
  if (requirement === undefined) {
    options.err('the service offers no batch-settlement channel for this stream; nothing was paid');
    return EXIT_FAILED;
  }
  return { requirement, paymentRequired };
}

/** The budget in atomic units, a whole number of updates (rounded down), or why it cannot be. */
export function budgetOf(
  budget: string,
  requirement: PaymentRequirements,
): { atomic: bigint; updates: bigint } | string {
  const unit = BigInt(requirement.amount);
  const decimals = findDefaultAsset(requirement.asset, requirement.network)?.decimals ?? 6;
  const asked = parseUnits(budget, decimals);
  const updates = asked / unit;
  if (updates === 0n) {
    return (
      `--budget ${budget} is below the price of one update (${usd(unit, requirement)}); ` +
      'nothing was paid'
    );
  }
  return { atomic: updates * unit, updates };
}

function usd(atomic: bigint, requirement: PaymentRequirements): string {
  const decimals = findDefaultAsset(requirement.asset, requirement.network)?.decimals ?? 6;
  return `$${formatUnits(atomic, decimals)}`;
}

/** Reads the events until the budget is used up, the stream ends, or the reader aborts. */
async function readStream(
  body: ReadableStream<Uint8Array>,
  requirement: PaymentRequirements,
  infoUrl: string,
  options: ClientOptions,
  aborter: AbortController,
): Promise<number> {
  const tally: Tally = {
    updates: 0,
    charged: 0n,
    channelId: '',
    badAttestations: 0,
    signer: undefined,
  };
  let openCharged = 0n;
  let outcome: { code: number; why: string } | undefined;
  try {
    for await (const event of parseSse(body)) {
      outcome = await onEvent(event);
      if (outcome !== undefined) break;
    }
  } catch (error) {
    if (!aborter.signal.aborted) throw error;
  }
  outcome ??= aborter.signal.aborted
    ? { code: EXIT_OK, why: 'interrupted' }
    : { code: EXIT_FAILED, why: 'the service closed the stream without an end event' };
  // the connection is closed whatever ended the reading: the service stops charging
  aborter.abort();
  const total =
    `${outcome.why}: ${tally.updates} updates, charged ${usd(tally.charged, requirement)} ` +
    `(${tally.charged} atomic)${tally.channelId === '' ? '' : ` on channel ${tally.channelId}`}`;
  (outcome.code === EXIT_OK ? options.out : options.err)(total);
  if (tally.updates > 0) {
    if (tally.badAttestations === 0) {
      options.out(`attestation ok on all ${tally.updates} updates (signer ${tally.signer ?? '?'})`);
    } else {
      options.err(`attestation NOT ok on ${tally.badAttestations} of ${tally.updates} updates`);
    }
  }
  return tally.badAttestations > 0 ? EXIT_FAILED : outcome.code;

  async function onEvent(event: SseEvent): Promise<{ code: number; why: string } | undefined> {
    const data = JSON.parse(event.data) as EventData;
    switch (event.event) {
      case 'open':
        openCharged = BigInt(data.charged ?? '0');
        tally.channelId = data.channelId ?? '';
        options.out(
          `open: stream ${data.streamId ?? '?'} on channel ${tally.channelId}, ` +
            `covered ${data.covered ?? '?'} atomic, charged before ${openCharged}`,
        );
        return undefined;
      case 'price':
        await onPrice(event, data);
        return undefined;
      case 'payment-required':
        return { code: EXIT_OK, why: 'budget used up (no top-up)' };
      case 'end':
        return { code: EXIT_OK, why: `stream ended (${data.reason ?? 'no reason given'})` };
      default:
        return undefined;
    }
  }

  async function onPrice(event: SseEvent, data: EventData): Promise<void> {
    tally.updates += 1;
    tally.charged =
      event.id === undefined
        ? tally.charged + BigInt(requirement.amount)
        : BigInt(event.id) - openCharged;
    const prices = Object.entries(data.price ?? {});
    const line = prices.map(([symbol, price]) => `${symbol} ${price}`).join(', ');
    options.out(`${line}  (#${tally.updates}, charged ${usd(tally.charged, requirement)})`);
    const signed = {
      timestamp: data.timestamp,
      currency: data.currency,
      price: data.price,
    };
    const attestation = data.attestation ?? null;
    const verdict = await verifyAttestation(
      attestation,
      JSON.stringify(signed),
      infoUrl,
      options.fetch ?? fetch,
    );
    if (!verdict.ok) {
      tally.badAttestations += 1;
      options.err(`  ${verdict.line}`);
    } else {
      tally.signer ??= /signer (0x[0-9a-fA-F]+)/.exec(verdict.line)?.[1] ?? undefined;
    }
  }
}

/** The service's published signer is read once per stream, not once per update. */
function cachingInfo(fetchImpl: typeof fetch): typeof fetch {
  const cache = new Map<string, Promise<{ status: number; text: string }>>();
  return async (input: string | URL | Request, init?: RequestInit) => {
    const key = String(input instanceof Request ? input.url : input);
    if (!key.endsWith('/.well-known/price-attestation')) return fetchImpl(input, init);
    let entry = cache.get(key);
    if (entry === undefined) {
      entry = fetchImpl(input, init).then(async (response) => ({
        status: response.status,
        text: await response.text(),
      }));
      cache.set(key, entry);
    }
    const { status, text } = await entry;
    return new Response(text, { status, headers: { 'content-type': 'application/json' } });
  };
}
