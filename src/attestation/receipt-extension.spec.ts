import { withSoldUrl } from './receipt-extension.js';

type Context = Parameters<typeof withSoldUrl>[0];

class Adapter {
  getPath(): string {
    return '/v1/ticker/BTC';
  }
  getUrl(): string {
    return 'http://price-api.example/v1/all-tickers?paid=/v1/ticker/BTC?for=x';
  }
  getMethod(): string {
    return 'GET';
  }
}

function contextOf(adapter: object): Context {
  return { transportContext: { request: { adapter } } } as unknown as Context;
}

function urlOf(context: Context): string {
  const transport = context.transportContext as { request: { adapter: Adapter } };
  return transport.request.adapter.getUrl();
}

describe('withSoldUrl: the URL a receipt names', () => {
  it('is the path on PUBLIC_URL, whatever Host and query the buyer sent', () => {
    const context = withSoldUrl(contextOf(new Adapter()), 'https://prices.example');
    expect(urlOf(context)).toBe('https://prices.example/v1/ticker/BTC');
  });

  it('is the path alone without PUBLIC_URL', () => {
    expect(urlOf(withSoldUrl(contextOf(new Adapter()), undefined))).toBe('/v1/ticker/BTC');
  });

  it("keeps the adapter's other methods", () => {
    const context = withSoldUrl(contextOf(new Adapter()), undefined);
    const transport = context.transportContext as { request: { adapter: Adapter } };
    expect(transport.request.adapter.getMethod()).toBe('GET');
  });

  it('leaves a context without an HTTP request as it is', () => {
    const context = { transportContext: undefined } as unknown as Context;
    expect(withSoldUrl(context, undefined)).toBe(context);
  });
});
