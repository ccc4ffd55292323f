/**
 * The sandbox buyer as a wallet for Swagger UI: `POST /sandbox/wallet` answers the few EIP-1193
 * requests the docs page makes (accounts, chain id, eth_signTypedData_v4), signing with the
 * throw-away buyer key. Registered by the local stack only, never by the service itself.
 */
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Hex, TypedDataDefinition } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

export const SANDBOX_WALLET_PATH = '/sandbox/wallet';

/** EIP-712 fields a wallet receives as decimal strings and signs as integers. */
const UINT_FIELDS = new Set(['value', 'validAfter', 'validBefore', 'chainId']);

interface WalletRequest {
  readonly method?: unknown;
  readonly params?: unknown;
}

export function installSandboxWallet(
  app: NestFastifyApplication,
  buyerKey: Hex,
  chainId: number,
): void {
  const buyer = privateKeyToAccount(buyerKey);
  const answer = async (request: WalletRequest): Promise<unknown> => {
    switch (request.method) {
      case 'eth_requestAccounts':
      case 'eth_accounts':
        return [buyer.address];
      case 'eth_chainId':
        return `0x${chainId.toString(16)}`;
      case 'eth_signTypedData_v4': {
        const [from, json]: readonly unknown[] = Array.isArray(request.params)
          ? (request.params as unknown[])
          : [];
        if (typeof from !== 'string' || from.toLowerCase() !== buyer.address.toLowerCase())
          throw new Error('only the sandbox buyer signs here');
        if (typeof json !== 'string') throw new Error('typed data must be a JSON string');
        const typed = JSON.parse(json, (key, value: unknown) =>
          UINT_FIELDS.has(key) && (typeof value === 'string' || typeof value === 'number')
            ? BigInt(value)
            : value,
        ) as TypedDataDefinition & { types: Record<string, unknown>; primaryType?: unknown };
        // a USDC transfer authorization for this service's docs page, nothing else
        if (typed.primaryType !== 'TransferWithAuthorization')
          throw new Error('the sandbox buyer signs transfer authorizations only');
        // viem derives the domain type itself
        const types = Object.fromEntries(
          Object.entries(typed.types).filter(([name]) => name !== 'EIP712Domain'),
        );
        return buyer.signTypedData({ ...typed, types } as TypedDataDefinition);
      }
      default:
        throw new Error(`unsupported method ${String(request.method)}`);
    }
  };
  app
    .getHttpAdapter()
    .getInstance()
    .post(SANDBOX_WALLET_PATH, async (request: FastifyRequest, reply: FastifyReply) => {
      // only the docs page this server serves, not another site the browser has open
      // A page's fetch always sends Origin; a request without one is not from the docs page.
      const origin = request.headers.origin;
      if (origin === undefined || !sameHost(origin, request.headers.host)) {
        return reply
          .status(403)
          .send({ error: 'the sandbox wallet signs for its own docs page only' });
      }
      try {
        const body: WalletRequest = request.body ?? {};
        return { result: await answer(body) };
      } catch (error) {
        return reply
          .status(400)
          .send({ error: error instanceof Error ? error.message : String(error) });
      }
    });
}

function sameHost(origin: string, host: string | undefined): boolean {
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}
