import { ApiProperty } from '@nestjs/swagger';

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

/**
 * The payment networks' states for answers that show them (GET /v1/sources): the payments room
 * provides it under PAYMENT_NETWORKS, so the rooms that show them import nothing of payments/.
 */
export interface PaymentNetworks {
  /** Every network of X402_NETWORKS (and the Solana ones), in their order. */
  states(): Promise<NetworkStateDto[]>;
}

export const PAYMENT_NETWORKS = Symbol('PaymentNetworks');
