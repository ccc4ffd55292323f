import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '../common/api-error.js';
import { ApiProblemResponses } from '../common/api-problem-responses.js';
import { SourcesDto } from './sources.dto.js';
import { SourcesAnswer } from './sources-answer.js';

@ApiTags('sources')
@Controller('v1/sources')
export class SourcesController {
  constructor(private readonly answer: SourcesAnswer) {}

  @Get()
  @ApiOperation({
    operationId: 'getSources',
    summary: 'Each price source and why it is or is not used (free)',
    description:
      'Per venue: its state, last success and error, latency, failures in a row, when it will be asked ' +
      'next, and which served prices its last quotes helped make or were dropped from as outliers. ' +
      'Answered from start-up on, before any venue has answered too. With several instances ' +
      'sharing REDIS_URL one of them polls the venues and the others serve the report it ' +
      'publishes; `poller` says which and `timestamp` when the report was made. `payments` gives ' +
      "this instance's payment networks and whether each is offered in the 402 now.",
  })
  @ApiOkResponse({ type: SourcesDto, description: 'The state of every enabled source.' })
  @ApiProblemResponses({
    503: {
      description:
        'Several instances sharing REDIS_URL: this one does not poll and cannot read the ' +
        "poller's report from Redis right now (`shared_state_unavailable`).",
      codes: [ErrorCode.SharedStateUnavailable],
    },
  })
  listSources(): Promise<SourcesDto> {
    return this.answer.answer();
  }
}
