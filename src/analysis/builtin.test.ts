import { builtinQuery } from './builtin.js';
import { renderTemplate, templateVariables } from './template.js';

const names = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

describe('builtinQuery', () => {
  it('GIVEN requestSuccessRate WHEN rendered THEN it is 1 − 5xx/total over the canary pods, no traffic being no data', () => {
    const q = renderTemplate(builtinQuery('requestSuccessRate'), templateVariables(names, 'm1', 60_000));
    expect(q).toMatchInlineSnapshot(
      `"1 - ((sum(rate(http_server_request_duration_seconds_count{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]+",http_response_status_code=~"5.."}[60s])) or vector(0)) / (sum(rate(http_server_request_duration_seconds_count{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]+"}[60s])) > 0))"`,
    );
  });

  it('GIVEN requestDuration WHEN rendered THEN it is the p99 in milliseconds from the histogram buckets', () => {
    const q = renderTemplate(builtinQuery('requestDuration'), templateVariables(names, 'm1', 30_000));
    expect(q).toMatchInlineSnapshot(
      `"histogram_quantile(0.99, sum by (le) (rate(http_server_request_duration_seconds_bucket{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]+"}[30s]))) * 1000 and on() (sum(rate(http_server_request_duration_seconds_count{namespace="shop",pod=~"web-[a-z0-9]+-[a-z0-9]+"}[30s])) > 0)"`,
    );
  });

  it('GIVEN a quantile WHEN built THEN it is used; out of range THEN an error', () => {
    expect(builtinQuery('requestDuration', 0.5)).toContain('histogram_quantile(0.5,');
    expect(() => builtinQuery('requestDuration', 1)).toThrow(/between 0 and 1/);
  });

  it('GIVEN the primary scope WHEN rendered THEN the primary pods are selected', () => {
    const q = renderTemplate(
      builtinQuery('requestSuccessRate'),
      templateVariables(names, 'm1', 60_000, 'primary'),
    );
    expect(q).toContain('pod=~"web-primary-[a-z0-9]+-[a-z0-9]+"');
    expect(q).not.toContain('pod=~"web-[a-z0-9]');
  });
});
