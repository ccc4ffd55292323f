import { ApiProperty } from '@nestjs/swagger';
import type { NetworkStates } from './network-states.js';

/** One network the paid routes are sold on, as the 402 offers it now. */
export class NetworkStateDto {
  @ApiProperty({ example: 'eip155:8453', description: 'CAIP-2 id.' })
  network!: string;

  @ApiProperty({
    enum: ['up', 'down', 'unchecked'],
    example: 'up',
    description:
      '`up`: its chain RPC answers and it is offered; `down`: it does not, and the 402 leaves it ' +
      'out while another network is up; `unchecked`: no RPC configured (a trusted facilitator).',
  })
  state!: 'up' | 'down' | 'unchecked';

  @ApiProperty({ required: false, example: 'eth_blockNumber failed within 1000 ms: timeout' })
  reason?: string;
}

/** Each network's state as the API shows it (readiness, sources). */
export async function networkStates(networks: NetworkStates): Promise<NetworkStateDto[]> {
  return (await networks.states()).map(({ network, state, reason }) => ({
    network,
    state,
    ...(reason === undefined ? {} : { reason }),
  }));
}
