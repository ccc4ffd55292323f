import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from './problem-details.js';
import { ProblemDetailsDto } from './problem-details.dto.js';

const PROBLEM_CONTENT = {
  [PROBLEM_CONTENT_TYPE]: { schema: { $ref: getSchemaPath(ProblemDetailsDto) } },
};

const RETRY_AFTER = {
  'Retry-After': {
    description: 'Seconds to wait before asking again.',
    schema: { type: 'integer', minimum: 1 },
  },
};

/** Documents problem+json error responses, one per status, with what causes each. */
export function ApiProblemResponses(responses: Readonly<Record<number, string>>): MethodDecorator {
  return applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ...Object.entries(responses).map(([status, description]) =>
      ApiResponse({
        status: Number(status),
        description,
        content: PROBLEM_CONTENT,
        ...(status === '503' ? { headers: RETRY_AFTER } : {}),
      }),
    ),
    ApiResponse({
      status: 'default',
      description: 'Unexpected error. Not charged.',
      content: PROBLEM_CONTENT,
    }),
  );
}
