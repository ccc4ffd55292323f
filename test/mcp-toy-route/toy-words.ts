import { Controller, Get, Module, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiProperty, ApiQuery } from '@nestjs/swagger';
import { Paid } from '../../src/payments/index.js';

export class ToyWordDto {
  @ApiProperty({ example: 'hello' })
  readonly word!: string;

  @ApiProperty({ example: 5 })
  readonly length!: number;
}

/**
 * Another engineer's data product as the MCP room sees it: a paid GET route under /v1/ with its
 * declarations, and nothing else; it must become a tool with nothing in src/mcp edited.
 */
@Controller('v1/toy-words')
export class ToyWordsController {
  @Get(':word')
  @Paid({ price: '$0.001', response: ToyWordDto, description: 'The word and its length.' })
  @ApiOperation({ operationId: 'getToyWord', summary: 'A word and how long it is' })
  @ApiParam({
    name: 'word',
    description: 'Any word of letters.',
    schema: { type: 'string', pattern: '^[a-z]+$' },
  })
  @ApiQuery({ name: 'shout', required: false, description: 'Upper-case the word.', type: Boolean })
  getToyWord(@Param('word') word: string, @Query('shout') shout?: string): ToyWordDto {
    return { word: shout === 'true' ? word.toUpperCase() : word, length: word.length };
  }
}

@Module({ controllers: [ToyWordsController] })
export class ToyWordsModule {}
