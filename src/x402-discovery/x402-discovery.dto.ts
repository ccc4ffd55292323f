import { ApiProperty } from '@nestjs/swagger';

/** The x402 discovery document (`/.well-known/x402`, version 1), as crawlers such as x402scan read it. */
export class X402DiscoveryDto {
  @ApiProperty({ enum: [1], example: 1 })
  version!: 1;

  @ApiProperty({
    type: [String],
    description:
      'Every payable resource: the paid HTTP routes (path parameters as `{name}`) and the paid ' +
      'MCP tools (`mcp://tool/<name>`, called on `POST /mcp`).',
    example: ['https://prices.example.com/v1/ticker/{symbol}', 'mcp://tool/get_ticker'],
  })
  resources!: string[];

  @ApiProperty({ description: 'How to pay, for a person or an agent reading this.' })
  instructions!: string;
}
