import type { LabelSelector } from '../api/common.js';
import { isLabelValue, labelKeyProblems, matchesLabelSelector, validateLabelSelector } from './selector.js';

const P = 'spec.clusterSelector';

describe('validateLabelSelector', () => {
  it.each<[string, unknown, string[]]>([
    ['an absent selector', undefined, []],
    ['an empty selector', {}, []],
    [
      'a valid selector',
      {
        matchLabels: { 'topology.kubernetes.io/region': 'eu-west-1', env: '' },
        matchExpressions: [
          { key: 'tier', operator: 'In', values: ['gold', 'silver'] },
          { key: 'gpu', operator: 'Exists' },
          { key: 'legacy', operator: 'DoesNotExist', values: [] },
        ],
      },
      [],
    ],
    [
      'a bad operator',
      {
        matchExpressions: [
          { key: 'a', operator: 'In', values: ['x'] },
          { key: 'b', operator: 'Equals', values: ['y'] },
        ],
      },
      [`${P}.matchExpressions[1].operator: Invalid value: "Equals": not a valid selector operator`],
    ],
    [
      'values with Exists',
      { matchExpressions: [{ key: 'gpu', operator: 'Exists', values: ['true'] }] },
      [
        `${P}.matchExpressions[0].values: Forbidden: may not be specified when \`operator\` is 'Exists' or 'DoesNotExist'`,
      ],
    ],
    [
      'no values with NotIn',
      { matchExpressions: [{ key: 'env', operator: 'NotIn' }] },
      [
        `${P}.matchExpressions[0].values: Required value: must be specified when \`operator\` is 'In' or 'NotIn'`,
      ],
    ],
    [
      'a missing key and operator',
      { matchExpressions: [{ values: ['x'] }] },
      [`${P}.matchExpressions[0].key: Required value`, `${P}.matchExpressions[0].operator: Required value`],
    ],
    [
      'invalid label keys and values',
      {
        matchLabels: { 'bad key': 'ok', good: 'bad value!' },
        matchExpressions: [{ key: 'Example.COM/x', operator: 'In', values: ['-dash'] }],
      },
      [
        `${P}.matchLabels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        `${P}.matchLabels: Invalid value: "bad value!": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        `${P}.matchExpressions[0].key: Invalid value: "Example.COM/x": prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters`,
        `${P}.matchExpressions[0].values[0]: Invalid value: "-dash": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
      ],
    ],
    ['a selector that is a string', 'env=prod', [`${P}: Invalid value: "env=prod": must be an object`]],
    [
      'matchExpressions that is a map',
      { matchExpressions: { key: 'a' } },
      [`${P}.matchExpressions: Invalid value: {"key":"a"}: must be a list`],
    ],
  ])('GIVEN %s WHEN validated THEN the errors are %j', (_what, selector, expected) => {
    expect(validateLabelSelector(selector, P).map((e) => e.message)).toEqual(expected);
  });
});

describe('labelKeyProblems / isLabelValue', () => {
  it.each<[string, number]>([
    ['app', 0],
    ['app.kubernetes.io/name', 0],
    ['a'.repeat(63), 0],
    ['a'.repeat(64), 1],
    ['/name', 1],
    ['prefix/', 1],
    ['-x', 1],
  ])('GIVEN the key %j WHEN checked THEN it has %d problems', (key, count) => {
    expect(labelKeyProblems(key)).toHaveLength(count);
  });

  it.each<[string, boolean]>([
    ['', true],
    ['v1.2_3-x', true],
    ['a'.repeat(64), false],
    ['x.', false],
  ])('GIVEN the value %j WHEN checked THEN valid is %s', (value, ok) => {
    expect(isLabelValue(value)).toBe(ok);
  });
});

describe('matchesLabelSelector', () => {
  const labels = { env: 'prod', region: 'eu', gpu: 'true' };

  it.each<[string, LabelSelector | undefined, boolean]>([
    ['an absent selector', undefined, true],
    ['an empty selector', {}, true],
    ['matching matchLabels', { matchLabels: { env: 'prod', region: 'eu' } }, true],
    ['a differing matchLabels value', { matchLabels: { env: 'dev' } }, false],
    [
      'In with the value',
      { matchExpressions: [{ key: 'region', operator: 'In', values: ['us', 'eu'] }] },
      true,
    ],
    [
      'In on an absent label',
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['gold'] }] },
      false,
    ],
    [
      'NotIn with the value',
      { matchExpressions: [{ key: 'env', operator: 'NotIn', values: ['prod'] }] },
      false,
    ],
    [
      'NotIn on an absent label',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['gold'] }] },
      true,
    ],
    ['Exists', { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }, true],
    [
      'DoesNotExist on a present label',
      { matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] },
      false,
    ],
    [
      'labels and expressions that must all hold',
      { matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] },
      false,
    ],
  ])('GIVEN %s WHEN matched against env=prod,region=eu,gpu=true THEN %s', (_what, selector, expected) => {
    expect(matchesLabelSelector(selector, labels)).toBe(expected);
  });
});
