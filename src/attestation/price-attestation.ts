import { hashStruct, parseUnits, verifyTypedData, type Address, type Hex } from 'viem';

/** The response header a paid price answer's attestation travels in. */
export const PRICE_ATTESTATION_HEADER = 'Price-Attestation';

/** Decimals of the signed fixed-point prices (as Chainlink's USD feeds). */
export const PRICE_DECIMALS = 8;

/**
 * No chainId and no verifyingContract: an attestation states a price, which holds on any chain
 * and for any contract; what binds it to this service is the signer's address.
 */
export const PRICE_ATTESTATION_DOMAIN = { name: 'x402 Price API', version: '1' } as const;

export const PRICE_ATTESTATION_TYPES = {
  PriceAttestation: [
    { name: 'currency', type: 'string' },
    { name: 'timestamp', type: 'uint64' },
    { name: 'prices', type: 'PricePoint[]' },
  ],
  PricePoint: [
    { name: 'symbol', type: 'string' },
    { name: 'price', type: 'uint256' },
    { name: 'venues', type: 'uint16' },
    { name: 'spreadBps', type: 'uint32' },
  ],
} as const;

export const PRICE_ATTESTATION_PRIMARY_TYPE = 'PriceAttestation';

/** One symbol's signed price and the confidence band around it. */
export interface PricePoint {
  readonly symbol: string;
  /** The served price in units of 10^-8 USD (see `fixedPointPrice`). */
  readonly price: bigint;
  /** Venues whose quotes made the price. */
  readonly venues: number;
  /** (highest − lowest of those venues' prices) / price, in basis points, rounded. */
  readonly spreadBps: number;
}

/** What is signed: one answer's prices, in the body's order, from one aggregation. */
export interface PriceAttestationMessage {
  readonly currency: string;
  /**
   * The oldest input behind any of the prices, epoch milliseconds: every venue quote (and
   * stablecoin rate) they were made from is at least this recent. At or before the body's
   * `timestamp`, when the snapshot was aggregated.
   */
  readonly timestamp: bigint;
  readonly prices: readonly PricePoint[];
}

export interface SignedPriceAttestation {
  readonly message: PriceAttestationMessage;
  readonly signature: Hex;
}

/** The header's JSON: integers that may pass 2^53 are decimal strings. */
interface WireAttestation {
  readonly message: {
    readonly currency: string;
    readonly timestamp: number;
    readonly prices: readonly {
      readonly symbol: string;
      readonly price: string;
      readonly venues: number;
      readonly spreadBps: number;
    }[];
  };
  readonly signature: Hex;
}

const UINT32_MAX = 2 ** 32 - 1;

/**
 * The fixed-point rule: the price as the JSON body writes it, rounded half away from zero to 8
 * decimals, times 10^8. Exact for every price of 0.01 USD or more; below that the body carries
 * more digits than 8 decimals hold.
 */
export function fixedPointPrice(price: number): bigint {
  if (!Number.isFinite(price) || price <= 0) throw new RangeError(`not a price: ${price}`);
  return parseUnits(plainDecimal(String(price)), PRICE_DECIMALS);
}

/** A spread fraction in whole basis points. */
export function spreadBps(spread: number): number {
  return Math.min(UINT32_MAX, Math.max(0, Math.round(spread * 10_000)));
}

/** JavaScript writes numbers under 1e-6 as `9.8e-7`; parseUnits reads only plain decimals. */
function plainDecimal(text: string): string {
  const match = /^(\d+)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (match === null) return text;
  const [, whole = '', fraction = '', exponent = '0'] = match;
  const digits = whole + fraction;
  const point = whole.length + Number(exponent);
  if (point <= 0) return `0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return digits + '0'.repeat(point - digits.length);
  return `${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** The header value: base64 of the JSON `{message, signature}`, as x402 encodes its headers. */
export function encodePriceAttestation({ message, signature }: SignedPriceAttestation): string {
  const wire: WireAttestation = {
    message: {
      currency: message.currency,
      timestamp: Number(message.timestamp),
      prices: message.prices.map((point) => ({ ...point, price: point.price.toString() })),
    },
    signature,
  };
  return Buffer.from(JSON.stringify(wire)).toString('base64');
}

/** Reads a header value; throws on anything that is not an attestation's shape. */
export function decodePriceAttestation(header: string): SignedPriceAttestation {
  const wire = JSON.parse(
    Buffer.from(header, 'base64').toString('utf8'),
  ) as Partial<WireAttestation>;
  const { message, signature } = wire;
  const prices: unknown = message?.prices;
  if (
    message === undefined ||
    typeof signature !== 'string' ||
    !/^0x[0-9a-fA-F]{130}$/.test(signature) ||
    typeof message.currency !== 'string' ||
    !Number.isSafeInteger(message.timestamp) ||
    !Array.isArray(prices)
  ) {
    throw new Error('not a price attestation');
  }
  return {
    message: {
      currency: message.currency,
      timestamp: BigInt(message.timestamp),
      prices: (prices as unknown[]).map(pricePointOf),
    },
    signature: signature,
  };
}

function pricePointOf(raw: unknown): PricePoint {
  const point = (raw ?? {}) as Partial<Record<keyof PricePoint, unknown>>;
  if (
    typeof point.symbol !== 'string' ||
    typeof point.price !== 'string' ||
    !/^\d+$/.test(point.price) ||
    !Number.isSafeInteger(point.venues) ||
    !Number.isSafeInteger(point.spreadBps)
  ) {
    throw new Error('not a price attestation');
  }
  return {
    symbol: point.symbol,
    price: BigInt(point.price),
    venues: point.venues as number,
    spreadBps: point.spreadBps as number,
  };
}

/** The typed data viem signs and verifies for `message`. */
export function priceAttestationTypedData(message: PriceAttestationMessage) {
  return {
    domain: PRICE_ATTESTATION_DOMAIN,
    types: PRICE_ATTESTATION_TYPES,
    primaryType: PRICE_ATTESTATION_PRIMARY_TYPE,
    message: { ...message, prices: [...message.prices] },
  } as const;
}

/** The body shape of a signed price answer: `price` for one value, `prices` for several. */
export interface PricedBody {
  readonly timestamp: string;
  readonly currency: string;
  readonly price?: Readonly<Record<string, number>>;
  readonly prices?: Readonly<Record<string, number>>;
}

/**
 * Why `header` does not prove `body` came from `signer`, or undefined when it does: the
 * signature recovers to `signer`, currency and every price (by the fixed-point rule, same
 * symbols in the same order) are the body's, and the signed time is no later than the body's.
 */
export async function attestationProblem(
  header: string | null | undefined,
  body: PricedBody,
  signer: Address,
): Promise<string | undefined> {
  if (header === null || header === undefined) return `no ${PRICE_ATTESTATION_HEADER} header`;
  let attestation: SignedPriceAttestation;
  try {
    attestation = decodePriceAttestation(header);
  } catch {
    return `the ${PRICE_ATTESTATION_HEADER} header is not an attestation`;
  }
  const { message, signature } = attestation;
  const valid = await verifyTypedData({
    address: signer,
    ...priceAttestationTypedData(message),
    signature,
  }).catch(() => false);
  if (!valid) return `the signature is not ${signer}'s`;
  if (message.currency !== body.currency) return 'the currency differs from the body';
  // the signed time is the answer's oldest input; the body's, when that was aggregated
  if (message.timestamp > BigInt(Date.parse(body.timestamp))) {
    return "the timestamp is later than the body's";
  }
  const prices = Object.entries(body.price ?? body.prices ?? {});
  if (prices.length !== message.prices.length) return 'the symbols differ from the body';
  for (const [index, [symbol, price]] of prices.entries()) {
    const point = message.prices[index];
    if (point?.symbol !== symbol) return 'the symbols differ from the body';
    if (point.price !== fixedPointPrice(price))
      return `the price of ${symbol} differs from the body`;
  }
  return undefined;
}

/**
 * The arguments of PriceAttestationVerifier.verifiedPrice for `symbol`: the answer's signed
 * fields with every point as its EIP-712 struct hash, and the asked point in full.
 */
export function verifierArguments(
  { message }: SignedPriceAttestation,
  symbol: string,
): {
  attestation: { currency: string; timestamp: bigint; pointHashes: Hex[] };
  index: bigint;
  point: PricePoint;
} {
  const index = message.prices.findIndex((point) => point.symbol === symbol);
  const point = message.prices[index];
  if (point === undefined) throw new Error(`${symbol} is not in the attestation`);
  const pointHashes = message.prices.map((each) =>
    hashStruct({ data: each, primaryType: 'PricePoint', types: PRICE_ATTESTATION_TYPES }),
  );
  return {
    attestation: { currency: message.currency, timestamp: message.timestamp, pointHashes },
    index: BigInt(index),
    point,
  };
}
