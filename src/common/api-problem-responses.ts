import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { PROBLEM_CONTENT_TYPE } from './problem-details.js';
import { ProblemDetailsDto } from './problem-details.dto.js';

/** Documents problem+json error responses, one per status, with what causes each. */
export function ApiProblemResponses(responses: Record<number, string>): MethodDecorator {
  return applyDecorators(
    ...Object.entries(responses).map(([status, description]) =>
      ApiResponse({
        status: Number(status),
        description,
        content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: '#/components/schemas/ProblemDetailsDto' } } },
      }),
    ),
    ApiResponse({ status: 'default', description: 'Unexpected error.', type: ProblemDetailsDto }),
  );
}
