/**
 * `npm run client -- stream BTC,ETH --budget 0.01 [--min-move-bps N] [--max-hz N]`: buys a paid
 * price stream (docs/streams.md). The unpaid GET's 402 names the batch-settlement price of one
 * update; the official batch client signs a voucher for that requirement with the budget as its
 * amount; the stream is read as Server-Sent Events, each update printed with the running charge
 * and its attestation checked as a ticker answer's is. It stops when the budget is used up (the
 * service's `payment-required`: no top-up), when the service ends the stream, or on Ctrl-C,
 * and prints the total.
 */
import type {
  BatchSettlementDepositStrategy,
  ClientChannelStorage,
} from '@x402/evm/batch-settlement/client';
import {
  x402Client,
  x402HTTPClient,
  type PaymentRequired,
  type PaymentRequirements,
  type SchemeNetworkClient,
} from '@x402/fetch';
import { verifyAttestation } from './answer-attestation.js';
import type { ClientOptions } from './client.js';
import { EXIT_FAILED, EXIT_OK, EXIT_USAGE, buyAndPrint } from './paid-get.js';
import { describeError, prettyJson } from './purchase-lines.js';
import { parseSse, type SseEvent } from './sse-lines.js';
import { budgetOf, usd, type StreamCommand } from './stream-command.js';

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
  schemeFor: (depositStrategy: BatchSettlementDepositStrategy) => SchemeNetworkClient,
  /** Where `schemeFor`'s scheme keeps its channels: told what the stream charged. */
  storage: ClientChannelStorage,
  buyer: string,
  options: ClientOptions & { readonly interrupt?: AbortSignal },
): Promise<number> {
  const fetchImpl = options.fetch ?? fetch;
  const query = new URLSearchParams();
  if (command.minMoveBps !== undefined) query.set('minMoveBps', command.minMoveBps);
  if (command.maxHz !== undefined) query.set('maxHz', command.maxHz);
  const url = `${apiUrl}/v1/stream/${command.symbols}${query.size === 0 ? '' : `?${query.toString()}`}`;
  /** Atomic units the stream's voucher adds; a deposit made meanwhile covers it too. */
  let budgetAtomic = 0n;
  const scheme = schemeFor((context) => {
    const needed =
      BigInt(context.maxClaimableAmount) + budgetAtomic - BigInt(context.currentBalance);
    const standard = BigInt(context.depositAmount);
    return needed > standard ? needed : standard;
  });
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
    budgetAtomic = budget.atomic;
    const accepted = { ...requirement, amount: budget.atomic.toString() };
    const open = async (): Promise<Response> => {
      const payload = await http.createPaymentPayload({ ...paymentRequired, accepts: [accepted] });
      return fetchImpl(url, {
        headers: { accept: 'text/event-stream', ...http.encodePaymentSignatureHeader(payload) },
        signal: aborter.signal,
      });
    };
    let response = await open();
    if (response.status === 402 && (await needsOpenChannel(response))) {
      // the service takes a stream's voucher on an open channel only: one paid ticker opens it
      const first = command.symbols.split(',')[0] ?? '';
      options.out('no open channel yet: its deposit comes with one ticker bought through it');
      const bought = await buyAndPrint(
        new x402Client().register('eip155:*', scheme),
        `${apiUrl}/v1/ticker/${first}`,
        `${apiUrl}/.well-known/price-attestation`,
        buyer,
        options,
      );
      if (bought !== EXIT_OK) return bought;
      response = await open();
      if (response.status === 402 && (await needsOpenChannel(response))) {
        options.err(
          `the channel's deposit does not cover --budget ${command.budget}: the service takes a ` +
            "stream's voucher only within what the channel holds, and a request's deposit is " +
            'sized when the channel opens; a smaller budget fits. Nothing was charged for the stream.',
        );
        return EXIT_FAILED;
      }
    }
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
      storage,
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

/** Whether a paid stream's 402 asks for a channel opened first (its body is left unread otherwise). */
async function needsOpenChannel(response: Response): Promise<boolean> {
  const text = await response.clone().text();
  try {
    const { error } = JSON.parse(text) as { error?: unknown };
    return typeof error === 'string' && error.startsWith('stream_needs_open_channel');
  } catch {
    return false;
  }
}

/** Reads the events until the budget is used up, the stream ends, or the reader aborts. */
async function readStream(
  body: ReadableStream<Uint8Array>,
  requirement: PaymentRequirements,
  infoUrl: string,
  options: ClientOptions,
  aborter: AbortController,
  storage: ClientChannelStorage,
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
  await recordCharged(storage, tally.channelId, openCharged + tally.charged);
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

/**
 * The channel's charged total as the stream left it, in the scheme's own record: the next
 * voucher on the channel (a request, another stream) signs from there. A stream sends no
 * PAYMENT-RESPONSE for the scheme to read it from.
 */
async function recordCharged(
  storage: ClientChannelStorage,
  channelId: string,
  charged: bigint,
): Promise<void> {
  if (channelId === '') return;
  const record = await storage.get(channelId.toLowerCase());
  if (record === undefined) return;
  await storage.set(channelId.toLowerCase(), {
    ...record,
    chargedCumulativeAmount: charged.toString(),
  });
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
