import { SOLANA_DEVNET_CAIP2, SOLANA_MAINNET_CAIP2, USDC_DEVNET_ADDRESS } from '@x402/svm';
import { solanaNetwork } from '../../networks/solana-networks.js';
import { EXACT_SVM_SETTINGS, ExactSvmVariables, parseSolana } from './exact-svm.settings.js';

const PAY_TO = '4Q9A6mXDSPTcKTLSk87uDpkeFmA7Cn132PFE8fRBPhTR';
const KEY = JSON.stringify(Array.from({ length: 64 }, (_, index) => index));

/** The section's variables as the settings reader assigns them. */
function variables(values: Partial<ExactSvmVariables>): ExactSvmVariables {
  return Object.assign(new ExactSvmVariables(), values);
}

/** The section built from an environment, with the problems it records. */
function build(env: Record<string, string>) {
  const problems: string[] = [];
  const settings = EXACT_SVM_SETTINGS.build(variables(env), { env, problems });
  return { settings, problems };
}

describe('Solana networks in X402_NETWORKS', () => {
  it('knows solana and solana-devnet by name and CAIP-2 id, with USDC', () => {
    expect(solanaNetwork('solana')?.network).toBe(SOLANA_MAINNET_CAIP2);
    expect(solanaNetwork(SOLANA_DEVNET_CAIP2)).toEqual({
      network: SOLANA_DEVNET_CAIP2,
      mint: USDC_DEVNET_ADDRESS,
      decimals: 6,
    });
    expect(solanaNetwork('base')).toBeUndefined();
  });

  it('is undefined, with no problem, when no Solana network is listed', () => {
    const problems: string[] = [];
    expect(parseSolana(['base'], variables({}), false, problems)).toBeUndefined();
    expect(problems).toEqual([]);
  });

  it('reads the pay-to, the RPC and the fee payer', () => {
    const problems: string[] = [];
    const config = parseSolana(
      ['base', 'solana-devnet'],
      variables({
        X402_PAY_TO_SOLANA: PAY_TO,
        X402_SOLANA_RPC_URL: 'https://solana.example/rpc/',
        X402_SOLANA_FEE_PAYER_KEY: KEY,
      }),
      true,
      problems,
    );
    expect(problems).toEqual([]);
    expect(config).toMatchObject({ payTo: PAY_TO, rpcUrl: 'https://solana.example/rpc' });
    expect(config?.networks.map((network) => network.network)).toEqual([SOLANA_DEVNET_CAIP2]);
    expect(config?.feePayerKey).toHaveLength(64);
  });

  it('stops start-up without a valid pay-to, or without the fee payer and RPC in embedded mode', () => {
    const problems: string[] = [];
    expect(parseSolana(['solana'], variables({}), true, problems)).toBeUndefined();
    expect(problems).toEqual([
      expect.stringContaining('X402_PAY_TO_SOLANA is required') as string,
      expect.stringContaining(
        'X402_SOLANA_FEE_PAYER_KEY and X402_SOLANA_RPC_URL are required',
      ) as string,
    ]);
    const bad: string[] = [];
    parseSolana(
      ['solana'],
      variables({
        X402_PAY_TO_SOLANA: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        X402_SOLANA_FEE_PAYER_KEY: 'short',
      }),
      false,
      bad,
    );
    expect(bad).toEqual([
      expect.stringContaining('X402_PAY_TO_SOLANA must be a base58 Solana address') as string,
      'X402_SOLANA_FEE_PAYER_KEY must be a 64-byte keypair, base58 or a JSON byte array',
    ]);
    expect(bad.join(' ')).not.toContain('short');
  });
});

describe('the exact-svm settings section', () => {
  it('reads nothing when X402_NETWORKS (or X402_NETWORK) lists no Solana network', () => {
    expect(build({ X402_PAY_TO_SOLANA: 'not-an-address' })).toEqual({
      settings: undefined,
      problems: [],
    });
    expect(build({ X402_NETWORKS: ' ', X402_NETWORK: 'base' }).problems).toEqual([]);
  });

  it('reads the Solana networks X402_NETWORKS lists, in order and once each', () => {
    const { settings, problems } = build({
      X402_NETWORKS: 'base, solana-devnet ,solana,' + SOLANA_DEVNET_CAIP2,
      X402_PAY_TO_SOLANA: PAY_TO,
    });
    expect(problems).toEqual([]);
    expect(settings?.networks.map(({ network }) => network)).toEqual([
      SOLANA_DEVNET_CAIP2,
      SOLANA_MAINNET_CAIP2,
    ]);
    expect(settings).toMatchObject({ payTo: PAY_TO, rpcUrl: undefined, feePayerKey: undefined });
  });

  it('falls back to X402_NETWORK when X402_NETWORKS is unset or empty', () => {
    const { settings } = build({
      X402_NETWORKS: '',
      X402_NETWORK: 'solana',
      X402_PAY_TO_SOLANA: PAY_TO,
    });
    expect(settings?.networks.map(({ network }) => network)).toEqual([SOLANA_MAINNET_CAIP2]);
  });

  it('asks for the fee payer and RPC only with the embedded facilitator', () => {
    const env = { X402_NETWORKS: 'base,solana', X402_PAY_TO_SOLANA: PAY_TO };
    expect(build({ ...env, X402_FACILITATOR: 'remote' }).problems).toEqual([]);
    expect(build({ ...env, X402_FACILITATOR: ' embedded ' }).problems).toEqual([
      'X402_SOLANA_FEE_PAYER_KEY and X402_SOLANA_RPC_URL are required when X402_FACILITATOR=embedded ' +
        'sells on Solana: the fee payer signs and submits each transfer there',
    ]);
  });

  it('never echoes the RPC URL or the fee payer key', () => {
    const { problems } = build({
      X402_NETWORKS: 'base,solana',
      X402_PAY_TO_SOLANA: PAY_TO,
      X402_SOLANA_RPC_URL: 'ftp://user:hunter2@rpc.example/',
      X402_SOLANA_FEE_PAYER_KEY: 'hunter3',
    });
    expect(problems).toEqual([
      'X402_SOLANA_RPC_URL must be an http(s) URL',
      'X402_SOLANA_FEE_PAYER_KEY must be a 64-byte keypair, base58 or a JSON byte array',
    ]);
    expect(EXACT_SVM_SETTINGS.secrets).toEqual([
      'X402_SOLANA_FEE_PAYER_KEY',
      'X402_SOLANA_RPC_URL',
    ]);
  });
});
