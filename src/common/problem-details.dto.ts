import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorCode } from './api-error.js';

/** OpenAPI schema of every error body except the 402 (RFC 9457 problem details). */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'about:blank' })
  type!: string;

  @ApiProperty({ example: 'Not Found' })
  title!: string;

  @ApiProperty({ type: 'integer', example: 404 })
  status!: number;

  @ApiProperty({ example: 'DOGEX is not supported; GET /v1/assets lists the supported symbols.' })
  detail!: string;

  @ApiProperty({ enum: ErrorCode, enumName: 'ErrorCode', example: ErrorCode.UnknownSymbol })
  code!: ErrorCode;

  @ApiPropertyOptional({ example: '/v1/ticker/DOGEX' })
  instance?: string;
}
