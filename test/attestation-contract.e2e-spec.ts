import { createWalletClient, http, type Abi, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { AttestationSigner } from '../src/attestation/attestation-signer.js';
import {
  PRICE_ATTESTATION_HEADER,
  decodePriceAttestation,
  verifierArguments,
  type SignedPriceAttestation,
} from '../src/attestation/price-attestation.js';
import { compileContracts } from './support/chain.js';
import { startPaidApp, type PaidApp } from './support/paid-app.js';

const KEY = generatePrivateKey();
const SIGNER = privateKeyToAccount(KEY).address;
const MAX_AGE_SECONDS = 300n;

describe('PriceAttestationVerifier (e2e, local chain)', () => {
  let stack: PaidApp;
  let verifier: Address;
  let abi: Abi;
  let bought: SignedPriceAttestation;

  beforeAll(async () => {
    stack = await startPaidApp({ env: { ATTESTATION_PRIVATE_KEY: KEY } });
    const artifact = compileContracts()['PriceAttestationVerifier'];
    if (artifact === undefined) throw new Error('PriceAttestationVerifier did not compile');
    abi = artifact.abi;
    const { chain } = stack;
    const wallet = createWalletClient({
      account: privateKeyToAccount(chain.accounts[3]!),
      chain: chain.publicClient.chain,
      transport: http(chain.rpcUrl),
    });
    const hash = await wallet.deployContract({ abi, bytecode: artifact.bytecode, args: [SIGNER] });
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.contractAddress == null) throw new Error('the verifier was not deployed');
    verifier = receipt.contractAddress;

    const response = await stack.buyer.fetchV2(`${stack.service.url}/v1/tickers/ETH,BTC,SOL`);
    expect(response.status).toBe(200);
    bought = decodePriceAttestation(response.headers.get(PRICE_ATTESTATION_HEADER) ?? '');
  }, 180_000);

  afterAll(async () => {
    await stack.close();
  });

  /** verifiedPrice for `symbol` of `signed`, asked as `asked` (the symbol by default). */
  function call(signed: SignedPriceAttestation, symbol: string, asked = symbol) {
    const { attestation, index, point } = verifierArguments(signed, symbol);
    return {
      address: verifier,
      abi,
      functionName: 'verifiedPrice',
      args: [attestation, index, point, asked, MAX_AGE_SECONDS, signed.signature],
    } as const;
  }

  async function verifiedPrice(signed: SignedPriceAttestation, symbol: string, asked?: string) {
    return (await stack.chain.publicClient.readContract(call(signed, symbol, asked))) as readonly [
      bigint,
      number,
      number,
    ];
  }

  it.each(['ETH', 'BTC', 'SOL'])('accepts the bought attestation for %s', async (symbol) => {
    const point = bought.message.prices.find((each) => each.symbol === symbol);
    await expect(verifiedPrice(bought, symbol)).resolves.toEqual([
      point?.price,
      point?.venues,
      point?.spreadBps,
    ]);
  });

  it('costs little gas to verify, about 1.2k more per further symbol', async () => {
    const { publicClient } = stack.chain;
    const all = await stack.buyer.fetchV2(`${stack.service.url}/v1/all-tickers`);
    const allSigned = decodePriceAttestation(all.headers.get(PRICE_ATTESTATION_HEADER) ?? '');
    const three = await publicClient.estimateContractGas(call(bought, 'BTC'));
    const every = await publicClient.estimateContractGas(call(allSigned, 'BTC'));
    process.stdout.write(
      `verifiedPrice gas (transaction total): 3-symbol answer ${three}, ` +
        `${allSigned.message.prices.length}-symbol answer ${every}\n`,
    );
    expect(three).toBeLessThan(60_000n);
    expect(every).toBeLessThan(three + 1_500n * BigInt(allSigned.message.prices.length));
  });

  it('rejects a forged signature', async () => {
    const signature =
      `${bought.signature.slice(0, 10)}${'ab'.repeat(4)}${bought.signature.slice(18)}` as Hex;
    await expect(verifiedPrice({ ...bought, signature }, 'BTC')).rejects.toThrow(
      /NotTheSigner|MalformedSignature/,
    );
  });

  it('rejects an altered price', async () => {
    const altered: SignedPriceAttestation = {
      ...bought,
      message: {
        ...bought.message,
        prices: bought.message.prices.map((point) =>
          point.symbol === 'BTC' ? { ...point, price: point.price + 1n } : point,
        ),
      },
    };
    await expect(verifiedPrice(altered, 'BTC')).rejects.toThrow(/NotTheSigner/);
  });

  it('rejects a point given for another symbol than the one asked', async () => {
    await expect(verifiedPrice(bought, 'BTC', 'ETH')).rejects.toThrow(/WrongSymbol/);
  });

  it('rejects another signer’s attestation of the same prices', async () => {
    const other = await new AttestationSigner(generatePrivateKey()).signPrices(bought.message);
    await expect(verifiedPrice(other, 'BTC')).rejects.toThrow(/NotTheSigner/);
  });

  it('rejects a stale attestation', async () => {
    const { publicClient } = stack.chain;
    await publicClient.request({
      method: 'evm_increaseTime' as never,
      params: [Number(MAX_AGE_SECONDS) + 60] as never,
    });
    await publicClient.request({ method: 'evm_mine' as never, params: [] as never });
    await expect(verifiedPrice(bought, 'BTC')).rejects.toThrow(/Stale/);
  });
});
