import { Counter, Histogram, Registry } from 'prom-client';
import { HTTP_BUCKETS, HttpAnswers } from './http-answers.js';

/** method, route pattern, status, seconds */
type Answer = readonly [string, string, number, number];

const ANSWERS: readonly Answer[] = [
  ['GET', '/v1/assets', 200, 0.0004],
  ['GET', '/v1/assets', 200, 0.001], // on a bound: counted in it (le is inclusive)
  ['GET', '/v1/assets', 200, 0.0011],
  ['GET', '/v1/ticker/:symbol', 402, 0.003],
  ['GET', '/v1/ticker/:symbol', 200, 0.75],
  ['HEAD', '/v1/assets', 200, 0.002],
  ['GET', 'unmatched', 404, 12], // over the largest bound: +Inf only
  ['GET', '/v1/ticker/:symbol', 402, 0.02],
];

/** The exposition as a sorted list of `name{sorted labels} value`: label order is not meaning. */
function samples(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([^{ ]+)(?:\{(.*)\})? (.+)$/.exec(line);
      if (match === null) throw new Error(`not a sample line: ${line}`);
      const [, name, labels = '', value] = match;
      return `${name ?? ''}{${labels.split(',').sort().join(',')}} ${value ?? ''}`;
    })
    .sort();
}

/** The same families as prom-client's own Counter and Histogram write them. */
function promClientReference(): { registry: Registry; answered: (answer: Answer) => void } {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'];
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'h',
    labelNames,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'h',
    labelNames,
    buckets: [...HTTP_BUCKETS],
    registers: [registry],
  });
  return {
    registry,
    answered: ([method, route, status, seconds]) => {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      durations.observe(labels, seconds);
    },
  };
}

describe('HttpAnswers', () => {
  it("exposes exactly the samples prom-client's counter and histogram would", async () => {
    const registry = new Registry();
    const answers = new HttpAnswers(registry);
    const reference = promClientReference();
    for (const answer of ANSWERS) {
      const [method, route, status, seconds] = answer;
      answers.route(route).answered(method, status, seconds);
      reference.answered(answer);
    }
    const ours = samples(await registry.metrics());
    expect(ours).toEqual(samples(await reference.registry.metrics()));
    expect(ours).toContain(
      'http_request_duration_seconds_bucket{le="0.001",method="GET",route="/v1/assets",status="200"} 2',
    );
    expect(ours).toContain(
      'http_requests_total{method="GET",route="/v1/ticker/:symbol",status="402"} 2',
    );
  });

  it('names each family with its type and help, and reads the same in JSON', async () => {
    const registry = new Registry();
    new HttpAnswers(registry).route('/v1/assets').answered('GET', 200, 0.002);
    const text = await registry.metrics();
    expect(text).toContain('# TYPE http_requests_total counter');
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# HELP http_requests_total HTTP requests answered');
    const json = await registry.getMetricsAsJSON();
    const counter = json.find((metric) => metric.name === 'http_requests_total');
    expect(counter?.values).toEqual([
      { labels: { method: 'GET', route: '/v1/assets', status: '200' }, value: 1 },
    ]);
  });

  it('keeps one record per route, method and status', () => {
    const registry = new Registry();
    const answers = new HttpAnswers(registry);
    expect(answers.route('/v1/assets')).toBe(answers.route('/v1/assets'));
    expect(answers.route('/v1/assets')).not.toBe(answers.route('unmatched'));
  });
});
