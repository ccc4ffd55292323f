import type { DestinationStream } from 'pino';
import { PinoLogger } from 'nestjs-pino';
import { pinoHttpOptions } from './log-output.js';
import { RequestLog } from './request-log.js';

describe('RequestLog', () => {
  const written: Record<string, unknown>[] = [];
  const destination: DestinationStream = {
    write: (line: string) => {
      written.push(JSON.parse(line) as Record<string, unknown>);
    },
  };
  const pino = new PinoLogger({
    pinoHttp: pinoHttpOptions({ format: 'json', level: 'log', destination }),
  });
  const requestLog = new RequestLog(pino);

  beforeEach(() => {
    written.length = 0;
  });

  it("adds fields to the request's later lines", () => {
    pino.runInContext(
      () => {
        requestLog.attach({ payer: '0xabc', amount: '2000' });
        pino.info('payment settled');
      },
      { bindings: { requestId: 'req-1' } },
    );
    expect(written).toEqual([
      expect.objectContaining({
        requestId: 'req-1',
        payer: '0xabc',
        amount: '2000',
        message: 'payment settled',
      }),
    ]);
  });

  it('does nothing outside a request (a sale reconciled in the background)', () => {
    requestLog.attach({ payer: '0xabc' });
    pino.info('reconciled');
    expect(written).toEqual([expect.not.objectContaining({ payer: '0xabc' })]);
  });
});
