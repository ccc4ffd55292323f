import type { Metric, Registry } from 'prom-client';

export const HTTP_BUCKETS: readonly number[] = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

type HttpLabels = { readonly method: string; readonly route: string; readonly status: string };

/** Answers of one method, route pattern and status: their count, duration sum and buckets. */
class AnswerSeries {
  count = 0;
  sum = 0;
  /** Answers per bucket, not cumulative; the last slot counts those over the largest bound. */
  readonly perBucket: number[] = new Array<number>(HTTP_BUCKETS.length + 1).fill(0);

  constructor(readonly labels: HttpLabels) {}

  observe(seconds: number): void {
    let bucket = 0;
    while (bucket < HTTP_BUCKETS.length && seconds > (HTTP_BUCKETS[bucket] ?? 0)) bucket += 1;
    this.perBucket[bucket] = (this.perBucket[bucket] ?? 0) + 1;
    this.count += 1;
    this.sum += seconds;
  }
}

/** The answers of one route pattern, kept by method and status. */
export class RouteAnswers {
  private readonly byMethod = new Map<string, Map<number, AnswerSeries>>();

  constructor(
    private readonly route: string,
    private readonly added: (series: AnswerSeries) => void,
  ) {}

  answered(method: string, status: number, seconds: number): void {
    let byStatus = this.byMethod.get(method);
    if (byStatus === undefined) {
      byStatus = new Map();
      this.byMethod.set(method, byStatus);
    }
    let series = byStatus.get(status);
    if (series === undefined) {
      series = new AnswerSeries({ method, route: this.route, status: String(status) });
      byStatus.set(status, series);
      this.added(series);
    }
    series.observe(seconds);
  }
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, counted in plain per-series records
 * and read by prom-client only when scraped. prom-client's own `inc`/`observe` hash the label
 * set on every call; on the free route that was the largest part of what the product added to a
 * bare Fastify answer. The two families are registered as metrics of `registry` and come out in
 * the same exposition (and `getMetricsAsJSON`) as prom-client's own counter and histogram would.
 */
export class HttpAnswers {
  private readonly routes = new Map<string, RouteAnswers>();
  private readonly series: AnswerSeries[] = [];

  constructor(registry: Registry) {
    registry.registerMetric(
      familyOf(
        'http_requests_total',
        'counter',
        'HTTP requests answered, by method, route pattern and status.',
        () => this.series.map((series) => ({ labels: series.labels, value: series.count })),
      ),
    );
    registry.registerMetric(
      familyOf(
        'http_request_duration_seconds',
        'histogram',
        'Time from request to response sent, by method, route pattern and status.',
        () => this.series.flatMap(histogramValues),
      ),
    );
  }

  /** The record of `route` (a pattern such as `/v1/ticker/:symbol`), made on first use. */
  route(route: string): RouteAnswers {
    let answers = this.routes.get(route);
    if (answers === undefined) {
      answers = new RouteAnswers(route, (series) => this.series.push(series));
      this.routes.set(route, answers);
    }
    return answers;
  }
}

interface FamilyValue {
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  readonly metricName?: string;
}

/**
 * A metric family prom-client's registry can expose: what its exposition and JSON read of a
 * metric (`name`, `help`, `type`, `aggregator`, `get()`). The registry's type names only its
 * own classes, hence the one cast.
 */
function familyOf(
  name: string,
  type: 'counter' | 'histogram',
  help: string,
  values: () => FamilyValue[],
): Metric {
  const family = {
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: () => Promise.resolve({ name, help, type, aggregator: 'sum' as const, values: values() }),
    // counted since the process started, like every other counter here
    reset: () => undefined,
  };
  return family as unknown as Metric;
}

/** A series as prom-client writes a histogram: cumulative `le` buckets, `+Inf`, sum and count. */
function histogramValues(series: AnswerSeries): FamilyValue[] {
  const name = 'http_request_duration_seconds';
  let cumulative = 0;
  const buckets = HTTP_BUCKETS.map((bound, i) => {
    cumulative += series.perBucket[i] ?? 0;
    return {
      labels: { ...series.labels, le: String(bound) },
      value: cumulative,
      metricName: `${name}_bucket`,
    };
  });
  return [
    ...buckets,
    { labels: { ...series.labels, le: '+Inf' }, value: series.count, metricName: `${name}_bucket` },
    { labels: series.labels, value: series.sum, metricName: `${name}_sum` },
    { labels: series.labels, value: series.count, metricName: `${name}_count` },
  ];
}
