import { ApiProperty } from '@nestjs/swagger';

const TYPED_FIELDS = {
  type: 'array',
  items: {
    type: 'object',
    properties: { name: { type: 'string' }, type: { type: 'string' } },
    required: ['name', 'type'],
  },
} as const;

class FixedPointDto {
  @ApiProperty({ description: 'Decimals of a signed price.', example: 8 })
  decimals!: number;

  @ApiProperty({ description: 'How a body price becomes the signed integer.' })
  rule!: string;
}

class ReceiptsDto {
  @ApiProperty({ description: 'The x402 extension the receipts follow.', example: 'offer-receipt' })
  extension!: string;

  @ApiProperty({ description: 'How a buyer asks for a receipt, and where it comes back.' })
  request!: string;
}

export class PriceAttestationInfoDto {
  @ApiProperty({ description: 'Whether paid answers are signed (ATTESTATION=on).' })
  enabled!: boolean;

  @ApiProperty({
    description: 'The address every attestation and receipt of this service is signed by.',
    type: 'string',
    nullable: true,
    example: '0x0B8A42b1f5dC0b25aAb2E02e2D0bF4A43Bbd7BfE',
  })
  signer!: string | null;

  @ApiProperty({ description: 'The response header carrying the attestation.' })
  header!: string;

  @ApiProperty({ description: "How the header's value is encoded." })
  encoding!: string;

  @ApiProperty({
    description: 'The EIP-712 domain (no chainId, no verifyingContract).',
    example: { name: 'x402 Price API', version: '1' },
  })
  domain!: Record<string, string>;

  @ApiProperty({ description: 'The EIP-712 primary type.', example: 'PriceAttestation' })
  primaryType!: string;

  @ApiProperty({
    description: 'The EIP-712 types, as viem and eth_signTypedData_v4 take them.',
    type: 'object',
    additionalProperties: TYPED_FIELDS as object,
  })
  types!: Record<string, { name: string; type: string }[]>;

  @ApiProperty({ type: FixedPointDto })
  fixedPoint!: FixedPointDto;

  @ApiProperty({ type: ReceiptsDto })
  receipts!: ReceiptsDto;
}
