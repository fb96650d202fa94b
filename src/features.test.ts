import { FEATURE_NAMES, FeatureGateError, FeatureGates } from './features.js';

describe('FeatureGates', () => {
  it('GIVEN no flag THEN every gate has its default, and the issue-5 gates exist with a stage', () => {
    const gates = FeatureGates.parse('');
    expect(FEATURE_NAMES).toEqual(
      expect.arrayContaining([
        'ConversionWebhook',
        'AdmissionWebhook',
        'StorageMigration',
        'StatisticalJudge',
        'GitWriteBack',
      ]),
    );
    expect(gates.list().map((g) => [g.name, g.enabled, g.stage])).toEqual([
      ['ConversionWebhook', true, 'Beta'],
      ['AdmissionWebhook', true, 'Beta'],
      ['StorageMigration', false, 'Alpha'],
      ['StatisticalJudge', false, 'Alpha'],
      ['GitWriteBack', true, 'Beta'],
    ]);
  });

  it('GIVEN Name=bool pairs with spaces WHEN parsed THEN they override the defaults', () => {
    const gates = FeatureGates.parse('StorageMigration=true, GitWriteBack=false,');
    expect(gates.enabled('StorageMigration')).toBe(true);
    expect(gates.enabled('GitWriteBack')).toBe(false);
    expect(gates.enabled('AdmissionWebhook')).toBe(true);
  });

  it.each([
    ['Foo=true', /unknown feature gate "Foo"; known: ConversionWebhook, /],
    ['GitWriteBack=yes', /GitWriteBack: value must be true or false, got "yes"/],
    ['GitWriteBack', /"GitWriteBack": expected Name=true or Name=false/],
  ])('GIVEN %j WHEN parsed THEN a FeatureGateError says why', (text, message) => {
    expect(() => FeatureGates.parse(text)).toThrow(FeatureGateError);
    expect(() => FeatureGates.parse(text)).toThrow(message);
  });
});
