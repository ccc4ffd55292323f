import { checkBatch } from './json-rpc-batch.js';

const call = (id: number | string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'get_ticker', arguments: { symbol: 'BTC' } },
});
const cancel = (requestId: number | string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId },
});

describe('checkBatch', () => {
  it('passes a single request and a batch of distinct ids as sent', () => {
    expect(checkBatch(call(1))).toEqual({
      kind: 'checked',
      body: call(1),
      methods: ['tools/call'],
    });
    const batch = [call(1), call('1'), { jsonrpc: '2.0', id: 3, method: 'tools/list' }];
    expect(checkBatch(batch)).toEqual({
      kind: 'checked',
      body: batch,
      methods: ['tools/call', 'tools/call', 'tools/list'],
    });
  });

  it('refuses a batch with two requests of one id (-32600), naming the id', () => {
    const checked = checkBatch([call(7), call(8), call(7)]);
    expect(checked).toMatchObject({
      kind: 'refused',
      refusal: { jsonrpc: '2.0', id: null, error: { code: -32600 } },
    });
    expect(checked.kind === 'refused' && checked.refusal.error.message).toMatch(/id 7/);
  });

  it('drops a request its own batch cancels, keeping the rest', () => {
    expect(checkBatch([call(1), call(2), cancel(1)])).toEqual({
      kind: 'checked',
      body: [call(2), cancel(1)],
      methods: ['tools/call'],
    });
  });

  it('leaves what is no JSON-RPC message to the transport', () => {
    expect(checkBatch([1, 2])).toEqual({ kind: 'checked', body: [1, 2], methods: [] });
  });
});
