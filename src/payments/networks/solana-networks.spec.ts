import { SOLANA_DEVNET_CAIP2, SOLANA_MAINNET_CAIP2, USDC_DEVNET_ADDRESS } from '@x402/svm';
import { parseSolana, solanaNetwork } from './solana-networks.js';

const PAY_TO = '4Q9A6mXDSPTcKTLSk87uDpkeFmA7Cn132PFE8fRBPhTR';
const KEY = JSON.stringify(Array.from({ length: 64 }, (_, index) => index));

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
    expect(parseSolana(['base'], {}, false, problems)).toBeUndefined();
    expect(problems).toEqual([]);
  });

  it('reads the pay-to, the RPC and the fee payer', () => {
    const problems: string[] = [];
    const config = parseSolana(
      ['base', 'solana-devnet'],
      {
        X402_PAY_TO_SOLANA: PAY_TO,
        X402_SOLANA_RPC_URL: 'https://solana.example/rpc/',
        X402_SOLANA_FEE_PAYER_KEY: KEY,
      },
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
    expect(parseSolana(['solana'], {}, true, problems)).toBeUndefined();
    expect(problems).toEqual([
      expect.stringContaining('X402_PAY_TO_SOLANA is required') as string,
      expect.stringContaining(
        'X402_SOLANA_FEE_PAYER_KEY and X402_SOLANA_RPC_URL are required',
      ) as string,
    ]);
    const bad: string[] = [];
    parseSolana(
      ['solana'],
      {
        X402_PAY_TO_SOLANA: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
        X402_SOLANA_FEE_PAYER_KEY: 'short',
      },
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
