import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * One schema serves every paid route: the fields that differ per route (amount, resource,
 * description) carry no example here; each operation's 402 example shows its own
 * (documentPaidOperations).
 */
export class PaymentRequirementsV1Dto {
  @ApiProperty({ example: 'exact' })
  scheme!: string;

  @ApiProperty({ description: 'x402 v1 network name (or CAIP-2 id).', example: 'base-sepolia' })
  network!: string;

  @ApiProperty({
    description: 'The route’s price in the token’s atomic units (USDC: 6 decimals, 1000000 is $1).',
  })
  maxAmountRequired!: string;

  @ApiProperty({ description: 'URL of the resource being sold: the URL asked for.' })
  resource!: string;

  @ApiProperty({ description: 'What is sold and its price, as the operation’s summary says.' })
  description!: string;

  @ApiProperty({ example: 'application/json' })
  mimeType!: string;

  @ApiProperty({
    description: 'Address that receives the payment.',
    example: '0x209693Bc6afc0C5328bA36FaF03C514EF312287C',
  })
  payTo!: string;

  @ApiProperty({ type: 'integer', example: 60 })
  maxTimeoutSeconds!: number;

  @ApiProperty({
    description: 'EIP-3009 token contract (USDC).',
    example: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  })
  asset!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'EIP-712 domain of the token.',
    example: { name: 'USDC', version: '2' },
  })
  extra!: Record<string, unknown>;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: 'Input and output of the resource.',
  })
  outputSchema?: Record<string, unknown>;
}

/**
 * The 402 body: x402 v1 shape, for `x402-fetch` 1.x. v2 clients read the same requirements from
 * the `PAYMENT-REQUIRED` header (base64 JSON).
 */
export class PaymentRequiredDto {
  @ApiProperty({ enum: [1], example: 1 })
  x402Version!: 1;

  @ApiProperty({
    description:
      'Why payment is required: `Payment required` for a first request, else the reason the payment was refused ' +
      '(e.g. `invalid_exact_evm_payload_signature`, `payment_already_used: ...`, `settlement_failed: ...`).',
    example: 'Payment required',
  })
  error!: string;

  @ApiProperty({ type: [PaymentRequirementsV1Dto] })
  accepts!: PaymentRequirementsV1Dto[];
}
