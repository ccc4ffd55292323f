import { ApiProperty } from '@nestjs/swagger';

export class AssetDto {
  @ApiProperty({ description: 'Asset symbol, upper-case.', example: 'BTC', pattern: '^[A-Z0-9]+$' })
  symbol!: string;

  @ApiProperty({ description: 'Currency the price is quoted in.', enum: ['USD'], example: 'USD' })
  quote!: 'USD';
}

export class AssetListDto {
  @ApiProperty({ description: 'Number of assets.', type: 'integer', minimum: 0, example: 37 })
  count!: number;

  @ApiProperty({ type: [AssetDto], description: 'Every asset that can be priced.' })
  assets!: AssetDto[];
}
