import { Controller, Get, Module } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProperty, ApiTags } from '@nestjs/swagger';
import { Attested } from '../../src/attestation/index.js';
import { Resolved } from '../../src/paid-answers/index.js';
import { Paid } from '../../src/payments/index.js';
import { ToyWordBook, type ToyWord } from './toy-word-book.js';
import { ToyWordResolver } from './toy-word.resolver.js';

export class ToyWordDto {
  @ApiProperty({ description: 'When the word was priced.', format: 'date-time' })
  readonly timestamp!: string;

  @ApiProperty({ enum: ['USD'] })
  readonly currency!: 'USD';

  @ApiProperty({
    description: 'The word, lower-case, and its price.',
    type: 'object',
    additionalProperties: { type: 'number' },
    example: { apple: 1.25 },
  })
  readonly price!: Record<string, number>;
}

/** A paid data product as a team would add one: a route, its price, its resolver, its answer. */
@ApiTags('toy-words')
@Controller('v1')
export class ToyWordsController {
  @Get('toy-words/:word')
  @Attested()
  @Paid({
    price: '$0.004',
    response: ToyWordDto,
    description: 'The price of the word.',
    resolver: ToyWordResolver,
  })
  @ApiOperation({ operationId: 'getToyWord', summary: 'The price of a word' })
  @ApiParam({ name: 'word', description: '1 to 20 letters.', schema: { type: 'string' } })
  getToyWord(@Resolved() word: ToyWord): ToyWordDto {
    return word.body;
  }
}

@Module({ controllers: [ToyWordsController], providers: [ToyWordBook, ToyWordResolver] })
export class ToyProductModule {}
