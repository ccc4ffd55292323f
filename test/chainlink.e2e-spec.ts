import { createWalletClient, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { loadConfig } from '../src/app-config.js';
import { ChainlinkSource, type ChainlinkConfig } from '../src/markets/chainlink.source.js';
import { createPriceSources } from '../src/markets/markets.module.js';
import { compileContracts, startLocalChain, type LocalChain } from './support/chain.js';
import { FakeVenue } from './support/fake-venue.js';

/** The source reads Base; the local chain answers with Base mainnet's chain id. */
const BASE_CHAIN_ID = 8453;
const NOW = Date.now();
const NOW_SECONDS = Math.floor(NOW / 1000);
const RPC_TIMEOUT_MS = 2000;

describe('ChainlinkSource against feeds on a local chain', () => {
  let chain: LocalChain;
  let deployFeed: (decimals: number, description: string) => Promise<Address>;
  let publish: (feed: Address, answer: bigint, updatedAtSeconds: number) => Promise<void>;

  const source = (feeds: ChainlinkConfig['feeds'], rpcUrl = chain.rpcUrl) =>
    new ChainlinkSource({ rpcUrl, feeds, updateRules: {} }, RPC_TIMEOUT_MS, () => NOW);

  beforeAll(async () => {
    chain = await startLocalChain({ chainId: BASE_CHAIN_ID });
    const feed = compileContracts().TestPriceFeed!;
    const wallet = createWalletClient({
      account: privateKeyToAccount(chain.accounts[0]!),
      chain: chain.publicClient.chain,
      transport: http(chain.rpcUrl),
    });
    const mined = async (hash: Hex) => {
      const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
      return receipt;
    };
    deployFeed = async (decimals, description) => {
      const hash = await wallet.deployContract({
        abi: feed.abi,
        bytecode: feed.bytecode,
        args: [decimals, description],
      });
      const { contractAddress } = await mined(hash);
      if (contractAddress == null) throw new Error('the feed was not deployed');
      return contractAddress;
    };
    publish = async (address, answer, updatedAtSeconds) => {
      await mined(
        await wallet.writeContract({
          address,
          abi: feed.abi,
          functionName: 'setRoundData',
          args: [answer, BigInt(updatedAtSeconds)],
        }),
      );
    };
  });

  afterAll(async () => {
    await chain.stop();
  });

  it('answers each feed in USD, scaled by its own decimals and dated by updatedAt', async () => {
    const eth = await deployFeed(8, 'ETH / USD');
    await publish(eth, 301_544_000_000n, NOW_SECONDS - 30);
    const link = await deployFeed(18, 'LINK / USD');
    await publish(link, 13_287_100_000_000_000_000n, NOW_SECONDS - 600);

    const quotes = await source({ ETH: eth, LINK: link }).fetchQuotes();

    expect(quotes).toEqual([
      {
        source: 'chainlink',
        symbol: 'ETH',
        quote: 'USD',
        price: 3015.44,
        observedAt: (NOW_SECONDS - 30) * 1000,
      },
      {
        source: 'chainlink',
        symbol: 'LINK',
        quote: 'USD',
        price: 13.2871,
        observedAt: (NOW_SECONDS - 600) * 1000,
      },
    ]);
  });

  it('follows new rounds, and a feed that stops updating keeps its old updatedAt', async () => {
    const btc = await deployFeed(8, 'BTC / USD');
    await publish(btc, 9_121_202_000_000n, NOW_SECONDS - 7200);
    const feeds = source({ BTC: btc });
    expect(await feeds.fetchQuotes()).toMatchObject([
      { price: 91212.02, observedAt: (NOW_SECONDS - 7200) * 1000 },
    ]);

    await publish(btc, 9_130_000_000_000n, NOW_SECONDS + 3600);
    expect(await feeds.fetchQuotes()).toMatchObject([{ price: 91300, observedAt: NOW }]);
  });

  it('skips a non-positive answer, an unfinished round and a feed without rounds', async () => {
    const eth = await deployFeed(8, 'ETH / USD');
    await publish(eth, 301_544_000_000n, NOW_SECONDS);
    const zero = await deployFeed(8, 'BTC / USD');
    await publish(zero, 0n, NOW_SECONDS);
    const negative = await deployFeed(8, 'USDT / USD');
    await publish(negative, -100_000_000n, NOW_SECONDS);
    const unfinished = await deployFeed(8, 'USDC / USD');
    await publish(unfinished, 100_000_000n, 0);
    const empty = await deployFeed(8, 'LINK / USD');

    const quotes = await source({
      ETH: eth,
      BTC: zero,
      USDT: negative,
      USDC: unfinished,
      LINK: empty,
    }).fetchQuotes();

    expect(quotes.map((quote) => quote.symbol)).toEqual(['ETH']);
  });

  it('refuses every feed while one describes another asset', async () => {
    const eth = await deployFeed(8, 'ETH / USD');
    await publish(eth, 301_544_000_000n, NOW_SECONDS);

    await expect(source({ ETH: eth, BTC: eth }).fetchQuotes()).rejects.toMatchObject({
      kind: 'invalid_body',
      message: `feeds refused: BTC at ${eth} describes itself as "ETH / USD", not "BTC / USD"`,
    });
  });

  it('refuses an address that is not a price feed', async () => {
    const eth = await deployFeed(8, 'ETH / USD');
    const account = privateKeyToAccount(chain.accounts[1]!).address;

    await expect(source({ ETH: eth, BTC: account }).fetchQuotes()).rejects.toMatchObject({
      kind: 'invalid_body',
      message: `feeds refused: BTC at ${account} does not answer decimals() and description()`,
    });
  });

  it('fails as a network error, without echoing the RPC URL, when the node is unreachable', async () => {
    const unreachable = source({ ETH: chain.usdcAddress }, 'http://127.0.0.1:9/v2/secret-key');
    const failure = unreachable.fetchQuotes();

    await expect(failure).rejects.toMatchObject({ kind: 'network' });
    await expect(failure).rejects.not.toHaveProperty(
      'message',
      expect.stringContaining('secret-key'),
    );
  });

  it('reports an RPC answering 429 as rate-limited, with its Retry-After', async () => {
    const node = await FakeVenue.start({
      '/': { kind: 'raw', status: 429, body: 'slow down', headers: { 'retry-after': '30' } },
    });
    try {
      await expect(
        source({ ETH: chain.usdcAddress }, node.url).fetchQuotes(),
      ).rejects.toMatchObject({ kind: 'rate_limited', message: 'HTTP 429', retryAfterMs: 30_000 });
    } finally {
      await node.close();
    }
  });

  it('is added after the venues when CHAINLINK_RPC_URL and CHAINLINK_FEEDS are set', async () => {
    const eth = await deployFeed(8, 'ETH / USD');
    await publish(eth, 301_544_000_000n, NOW_SECONDS);
    const config = loadConfig({
      X402_PAY_TO: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      MARKETS: 'coinbase,kraken',
      CHAINLINK_RPC_URL: chain.rpcUrl,
      CHAINLINK_FEEDS: `eth=${eth.toLowerCase()}:1200:0.15`,
    });

    const sources = createPriceSources(config);

    expect(sources.map((priceSource) => priceSource.id)).toEqual([
      'coinbase',
      'kraken',
      'chainlink',
    ]);
    expect(await sources[2]!.fetchQuotes()).toMatchObject([
      {
        symbol: 'ETH',
        price: 3015.44,
        updateRule: { heartbeatMs: 1_200_000, deviation: 0.0015 },
      },
    ]);
  });
});
