import { currentRequestId, noteSale, runWithRequestLog, type RequestLog } from './request-log.js';

describe('the request log store', () => {
  it('notes a sale on the request being served, for its access line', async () => {
    const log: RequestLog = { requestId: 'req-1', sale: undefined };
    await new Promise<void>((resolve) => {
      runWithRequestLog(log, () => {
        void Promise.resolve().then(() => {
          expect(currentRequestId()).toBe('req-1');
          noteSale({ payer: '0xabc', amount: '2000', network: 'eip155:84532' });
          resolve();
        });
      });
    });
    expect(log.sale).toEqual({ payer: '0xabc', amount: '2000', network: 'eip155:84532' });
  });

  it('does nothing outside a request (a sale reconciled in the background)', () => {
    expect(currentRequestId()).toBeUndefined();
    expect(() => {
      noteSale({ payer: '0xabc', amount: '2000', network: 'eip155:84532' });
    }).not.toThrow();
  });
});
