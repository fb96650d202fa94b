import { MetricConfigError } from './errors.js';
import { promDuration, renderTemplate, templateVariables } from './template.js';
import type { ReleaseNames } from '../rollout/names.js';

const names: ReleaseNames = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

describe('renderTemplate', () => {
  it('GIVEN every variable WHEN rendered for the canary THEN each is filled', () => {
    const t =
      '{{namespace}} {{ target }} {{ primary }} {{ canary }} {{ primaryService }} {{ canaryService }} {{ interval }} {{ cluster }}';
    expect(renderTemplate(t, templateVariables(names, 'member-1', 90_000))).toBe(
      'shop web web-primary web web-primary web-canary 90s member-1',
    );
  });

  it('GIVEN the primary scope WHEN rendered THEN target, canary and canaryService name the primary', () => {
    expect(
      renderTemplate(
        '{{ target }}/{{ canary }}/{{ canaryService }}',
        templateVariables(names, 'c', 1000, 'primary'),
      ),
    ).toBe('web-primary/web-primary/web-primary');
  });

  it('GIVEN an unknown variable WHEN rendered THEN a MetricConfigError names it, never an empty string', () => {
    const render = () =>
      renderTemplate(
        'rate(x{pod=~"{{ canry }}-.*"}[1m])',
        templateVariables(names, 'c', 1000),
        'metric error-rate',
      );
    expect(render).toThrow(MetricConfigError);
    expect(render).toThrow(/metric error-rate: unknown template variable \{\{ canry \}\}; known: namespace/);
  });

  it('GIVEN an Object.prototype name WHEN rendered THEN it is unknown too', () => {
    expect(() => renderTemplate('{{ constructor }}', templateVariables(names, 'c', 1000))).toThrow(
      /constructor/,
    );
  });

  it('GIVEN an unclosed {{ WHEN rendered THEN the error says where', () => {
    expect(() => renderTemplate('sum(x) {{ target', templateVariables(names, 'c', 1000))).toThrow(
      /unclosed \{\{ at character 8/,
    );
  });

  it('GIVEN PromQL braces WHEN rendered THEN they are left alone', () => {
    expect(renderTemplate('sum(x{a="b"})', templateVariables(names, 'c', 1000))).toBe('sum(x{a="b"})');
  });

  it.each([
    [60_000, '60s'],
    [1500, '1500ms'],
    [0, '1ms'],
  ])('GIVEN %p ms THEN the PromQL duration is %p', (ms, text) => {
    expect(promDuration(ms)).toBe(text);
  });
});
