import type { Provider } from '@nestjs/common';
import {
  PAYMENT_NETWORKS,
  type NetworkStateDto,
  type PaymentNetworks,
} from '../../common/payment-networks.js';
import { NetworkStates } from './network-states.js';

/** Each network's state as the API shows it (readiness, sources). */
export async function networkStates(networks: NetworkStates): Promise<NetworkStateDto[]> {
  return (await networks.states()).map(({ network, state, reason }) => ({
    network,
    state,
    ...(reason === undefined ? {} : { reason }),
  }));
}

/** The networks' states as this room contributes them to other rooms' answers (GET /v1/sources). */
export const paymentNetworksProvider: Provider = {
  provide: PAYMENT_NETWORKS,
  inject: [NetworkStates],
  useFactory: (networks: NetworkStates): PaymentNetworks => ({
    states: () => networkStates(networks),
  }),
};
