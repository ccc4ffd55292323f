/**
 * The reference seller: the official `@x402/express` middleware (`paymentMiddleware`) selling one
 * route at the product's own price, with the in-process facilitator set up as the x402 docs say
 * for a local chain (10 ms polling, a nonce manager on the settling key).
 */
import { x402Facilitator } from '@x402/core/facilitator';
import { x402ResourceServer, type FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware } from '@x402/express';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { createWalletClient, defineChain, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createNonceManager, jsonRpc } from 'viem/nonce';
import type { TargetSettings } from './targets.js';

type ExpressSettings = Extract<TargetSettings, { kind: 'express' }>;

/** The in-process facilitator set up as the x402 docs say for a local chain. */
function localFacilitator(settings: ExpressSettings): FacilitatorClient {
  const account = privateKeyToAccount(settings.settlerKey, {
    nonceManager: createNonceManager({ source: jsonRpc() }),
  });
  const chain = defineChain({
    id: settings.chainId,
    name: 'local',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [settings.rpcUrl] } },
  });
  const client = createWalletClient({
    account,
    chain,
    transport: http(settings.rpcUrl),
    pollingInterval: 10,
  }).extend(publicActions);
  const facilitator = new x402Facilitator();
  registerExactEvmScheme(facilitator, {
    signer: toFacilitatorEvmSigner({
      ...client,
      address: account.address,
      // viem's parameters are a wider union than the signer interface names.
      verifyTypedData: (args) =>
        client.verifyTypedData(args as Parameters<typeof client.verifyTypedData>[0]),
    }),
    networks: settings.requirement.network,
  });
  return {
    verify: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> =>
      facilitator.verify(payload, requirements),
    settle: (payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> =>
      facilitator.settle(payload, requirements),
    getSupported: (): Promise<SupportedResponse> =>
      Promise.resolve(facilitator.getSupported() as SupportedResponse),
  };
}

export async function startExpress(settings: ExpressSettings): Promise<string> {
  const { requirement } = settings;
  const { network } = requirement;
  const server = new x402ResourceServer(localFacilitator(settings)).register(
    network,
    new ExactEvmScheme(),
  );
  const app = express();
  app.use(
    paymentMiddleware(
      {
        [`GET ${settings.path}`]: {
          accepts: {
            scheme: requirement.scheme,
            network,
            payTo: requirement.payTo,
            price: {
              amount: requirement.amount,
              asset: requirement.asset,
              extra: requirement.extra,
            },
            maxTimeoutSeconds: requirement.maxTimeoutSeconds,
          },
          description: 'Current USD price of one asset',
          mimeType: 'application/json',
        },
      },
      server,
    ),
  );
  app.get(settings.path, (_request, response) => {
    response
      .status(settings.paidBody.status)
      .set(settings.paidBody.headers)
      .send(settings.paidBody.body);
  });
  return new Promise((resolve) => {
    const listener = app.listen(0, '127.0.0.1', () => {
      resolve(`http://127.0.0.1:${String((listener.address() as AddressInfo).port)}`);
    });
  });
}
