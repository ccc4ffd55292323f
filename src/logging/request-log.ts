import { Injectable } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';

/** Fields for the log of the request being served, such as a sale's payer and amount. */
@Injectable()
export class RequestLog {
  constructor(private readonly pino: PinoLogger) {}

  /**
   * Adds `fields` to every later line of the request being served and to its access line.
   * Outside a request (a sale reconciled in the background) there is no such log: nothing.
   */
  attach(fields: Readonly<Record<string, unknown>>): void {
    if (this.pino.logger === PinoLogger.root) return;
    this.pino.assign(fields);
  }
}
