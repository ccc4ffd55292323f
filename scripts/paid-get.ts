/**
 * One paid GET as `npm run client` makes it, on any network: the x402 client pays what the 402
 * asks, and the answer, what was paid, the settlement and the check of the answer's signed price
 * are printed.
 */
import { wrapFetchWithPayment, type PaymentRequirements, type x402Client } from '@x402/fetch';
import { verifyAnswer } from './answer-attestation.js';
import type { ClientOptions } from './client.js';
import {
  describeError,
  describePaid,
  describeSettlement,
  paymentReceipt,
  prettyJson,
} from './purchase-lines.js';

export const EXIT_OK = 0;
/** The request failed, was refused, or there is no API to call. */
export const EXIT_FAILED = 1;
/** The command line asks for something that cannot be bought as given; nothing was paid. */
export const EXIT_USAGE = 2;

/**
 * GETs `url` through `client` (its schemes registered; `buyer` names who pays), then checks the
 * answer against the signer published at `attestationInfoUrl`.
 */
export async function buyAndPrint(
  client: x402Client,
  url: string,
  attestationInfoUrl: string,
  buyer: string,
  options: ClientOptions,
): Promise<number> {
  let chosen: PaymentRequirements | undefined;
  // The requirements the client picked from the 402 are what it signed for: that is the price.
  client.onAfterPaymentCreation(({ selectedRequirements }) => {
    chosen = selectedRequirements;
    return Promise.resolve();
  });
  options.out(`GET ${url}  (${buyer})`);

  let response: Response;
  let body: string;
  try {
    response = await wrapFetchWithPayment(options.fetch ?? fetch, client)(url);
    body = await response.text();
  } catch (error) {
    options.err(`Request failed: ${describeError(error)}`);
    return EXIT_FAILED;
  }
  const receipt = paymentReceipt(response);

  if (response.status !== 200) {
    options.err(`HTTP ${response.status} ${response.statusText}`);
    options.err(prettyJson(body));
    if (receipt !== undefined && !receipt.success) {
      options.err(`settlement failed: ${receipt.errorReason ?? 'no reason given'}; not charged`);
    }
    return EXIT_FAILED;
  }
  options.out(prettyJson(body));
  options.out(
    chosen === undefined ? 'paid nothing: no payment was asked for' : describePaid(chosen),
  );
  options.out(describeSettlement(receipt));
  // every answer is checked against the signer the service publishes
  const verdict = await verifyAnswer(response, body, attestationInfoUrl, options.fetch ?? fetch);
  (verdict.ok ? options.out : options.err)(verdict.line);
  return verdict.ok ? EXIT_OK : EXIT_FAILED;
}
