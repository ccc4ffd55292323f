import { recordedStreamMessages } from '../../test/support/stream-fixtures.js';
import { BINANCE_STREAM } from './binance.stream.js';
import { BYBIT_STREAM } from './bybit.stream.js';
import { COINBASE_STREAM } from './coinbase.stream.js';
import { KRAKEN_STREAM } from './kraken.stream.js';
import { OKX_STREAM } from './okx.stream.js';
import { BINANCE } from './binance.venue.js';
import { BYBIT } from './bybit.venue.js';
import { COINBASE } from './coinbase.venue.js';
import { KRAKEN } from './kraken.venue.js';
import { OKX } from './okx.venue.js';
import type { StreamMessage } from './price-stream.js';
import type { VenueDefinition } from './venue-definition.js';
import { VenueError } from './venue-error.js';

const RECEIVED_AT = 1_795_176_000_500;
const MOMENT = 1_795_176_000_000;

/** The venue's recorded messages (named by its id), read by its stream protocol. */
function replay(venue: VenueDefinition): StreamMessage[] {
  const protocol = venue.stream!.protocol;
  return recordedStreamMessages(venue.id).map((text) => protocol.parse(text, RECEIVED_AT));
}

function quotesOf(messages: StreamMessage[]) {
  return messages.flatMap((message) => (message.kind === 'quotes' ? message.quotes : []));
}

describe('ticker stream protocols, against recorded messages', () => {
  it('coinbase: ticker snapshots and updates in USD, dated by the message, heartbeats alive', () => {
    const messages = replay(COINBASE);
    expect(messages.map((message) => message.kind)).toEqual(['alive', 'quotes', 'alive', 'quotes']);
    expect(quotesOf(messages).map((quote) => [quote.symbol, quote.price])).toEqual([
      ['BTC', 91212.02],
      ['ETH', 3015.64],
      ['SOL', 138.51],
      ['BTC', 91214.5],
    ]);
    expect(quotesOf(messages)[0]).toMatchObject({
      quote: 'USD',
      volume: 17466.60522174,
      observedAt: MOMENT - 188,
    });
    const [tickers, heartbeats] = COINBASE_STREAM.subscribe([
      { symbol: 'BTC', quote: 'USD' },
      { symbol: 'ETH', quote: 'USDT' },
    ]);
    expect(JSON.parse(tickers!)).toEqual({
      type: 'subscribe',
      product_ids: ['BTC-USD'],
      channel: 'ticker',
    });
    expect(JSON.parse(heartbeats!)).toEqual({ type: 'subscribe', channel: 'heartbeats' });
  });

  it('kraken: v2 tickers by BTC/USD, numbers as sent, heartbeat and pong alive', () => {
    const messages = replay(KRAKEN);
    expect(messages.map((message) => message.kind)).toEqual([
      'alive',
      'quotes',
      'quotes',
      'alive',
      'alive',
      'quotes',
    ]);
    expect(quotesOf(messages).map((quote) => [quote.symbol, quote.quote, quote.price])).toEqual([
      ['BTC', 'USD', 91283.2],
      ['ETH', 'USD', 3014.5],
      ['SOL', 'USD', 138.56],
    ]);
    expect(JSON.parse(KRAKEN_STREAM.subscribe([{ symbol: 'BTC', quote: 'USD' }])[0]!)).toEqual({
      method: 'subscribe',
      params: { channel: 'ticker', symbol: ['BTC/USD'] },
    });
  });

  it('binance: USDT and USDC mini tickers dated by E, other quotes skipped', () => {
    const messages = replay(BINANCE);
    expect(messages.map((message) => message.kind)).toEqual(['quotes', 'alive']);
    expect(quotesOf(messages).map((quote) => [quote.symbol, quote.quote, quote.price])).toEqual([
      ['BTC', 'USDT', 91258.91],
      ['ETH', 'USDT', 3015.44],
      ['SOL', 'USDC', 138.646],
      ['BTC', 'USDC', 91248.71],
    ]);
    expect(quotesOf(messages)[0]?.observedAt).toBe(1_795_175_999_870);
    expect(BINANCE_STREAM.subscribe([{ symbol: 'BTC', quote: 'USDT' }])).toEqual([]);
  });

  it('okx: tickers dated by ts, the text pong alive, an error event refused', () => {
    const messages = replay(OKX);
    expect(messages.map((message) => message.kind)).toEqual([
      'alive',
      'quotes',
      'quotes',
      'alive',
      'refused',
      'quotes',
    ]);
    expect(quotesOf(messages)).toEqual([
      expect.objectContaining({
        symbol: 'BTC',
        quote: 'USDT',
        price: 91189.8,
        observedAt: 1_795_175_999_358,
      }),
      expect.objectContaining({ symbol: 'ETH', quote: 'USDT', price: 3015.19 }),
      expect.objectContaining({ symbol: 'BTC', quote: 'USDC', price: 91306.4 }),
    ]);
    expect(messages[4]).toEqual({
      kind: 'refused',
      message: expect.stringContaining('60018') as string,
    });
    expect(JSON.parse(OKX_STREAM.subscribe([{ symbol: 'BTC', quote: 'USDC' }])[0]!)).toEqual({
      op: 'subscribe',
      args: [{ channel: 'tickers', instId: 'BTC-USDC' }],
    });
  });

  it('bybit: ticker topics dated by ts, ten topics per request, a refused subscription reported', () => {
    const messages = replay(BYBIT);
    expect(messages.map((message) => message.kind)).toEqual([
      'alive',
      'quotes',
      'quotes',
      'alive',
      'refused',
      'quotes',
    ]);
    expect(quotesOf(messages).map((quote) => [quote.symbol, quote.quote, quote.price])).toEqual([
      ['BTC', 'USDT', 91277.29],
      ['SOL', 'USDT', 138.628],
      ['BTC', 'USDC', 91209.85],
    ]);
    const many = Array.from({ length: 23 }, (_, index) => ({
      symbol: `A${index}`,
      quote: 'USDT' as const,
    }));
    expect(
      BYBIT_STREAM.subscribe(many).map(
        (text) => (JSON.parse(text) as { args: string[] }).args.length,
      ),
    ).toEqual([10, 10, 3]);
  });

  it.each([COINBASE_STREAM, KRAKEN_STREAM, BINANCE_STREAM, OKX_STREAM, BYBIT_STREAM])(
    '$id: garbage is an unreadable message, not a quote',
    (protocol) => {
      for (const garbage of ['\u0000\u00ff{', '{"unexpected":true}', '42']) {
        expect(() => protocol.parse(garbage, RECEIVED_AT)).toThrow(VenueError);
      }
    },
  );
});
