import type { Address } from 'viem';
import type { UpdateRule } from './price-source.js';

/** Chainlink USD price feed proxies on Base mainnet, by our symbol (the CHAINLINK_FEEDS default). */
export const BASE_CHAINLINK_USD_FEEDS: Readonly<Record<string, Address>> = {
  ETH: '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70',
  BTC: '0x64c911996D3c6aC71f9b455B1E8E7266BcbD848F',
  USDC: '0x7e860098F58bBFC8648a4311b374B1D669a2bc6B',
  USDT: '0xf19d560eB8d2ADf07BD6D13ed03e1D11215721F9',
  LINK: '0x17CAb8FE31E32f08326e5E27412894e49B0f9D65',
};

/**
 * Heartbeat and deviation threshold of each default feed, as Chainlink's feed directory
 * (data.chain.link, Base mainnet) gives them; CHAINLINK_FEEDS can state others.
 */
export const BASE_CHAINLINK_UPDATE_RULES: Readonly<Record<string, UpdateRule>> = {
  ETH: { heartbeatMs: 1200_000, deviation: 0.0015 },
  BTC: { heartbeatMs: 1200_000, deviation: 0.0015 },
  USDC: { heartbeatMs: 86_400_000, deviation: 0.003 },
  USDT: { heartbeatMs: 86_400_000, deviation: 0.003 },
  LINK: { heartbeatMs: 86_400_000, deviation: 0.005 },
};
