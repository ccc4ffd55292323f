import { HttpException } from '@nestjs/common';

/**
 * A response decided in full before the handler (a 402 challenge, a stored response replayed
 * for free): the exception filter sends its status, headers and body unchanged.
 */
export class PreparedResponseException extends HttpException {
  constructor(
    status: number,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, string>>,
  ) {
    super('prepared response', status);
  }
}
