import { describe, expect, it } from '@jest/globals';
import { revisionSha, rollbackCommitMessage, trailerValues } from './write-back-message.js';

const SHA = 'a'.repeat(40);

describe('rollbackCommitMessage', () => {
  it('GIVEN a failing metric THEN subject, body and trailers name release, step, metric, value and threshold', () => {
    expect(
      rollbackCommitMessage({
        namespace: 'shop',
        name: 'web',
        step: '2/4',
        canaryWeight: 20,
        reason: 'AnalysisFailed: score 0.50 below 0.95\n(2 of 2 failed checks)',
        metric: 'error-rate',
        value: '0.2',
        threshold: '<= 0.01',
        badRevision: `main@sha1:${SHA}`,
      }),
    ).toBe(
      [
        'Roll back shop/web at step 2/4: error-rate = 0.2 (threshold <= 0.01)',
        '',
        'Sluice rolled back CanaryRelease shop/web at step 2/4 (canary weight 20%).',
        '',
        'Reason: AnalysisFailed: score 0.50 below 0.95 (2 of 2 failed checks)',
        'Failing metric: error-rate = 0.2 (threshold <= 0.01)',
        `Rolled back revision: main@sha1:${SHA}`,
        '',
        'Sluice-Release: shop/web',
        `Sluice-Reverts: ${SHA}`,
        '',
      ].join('\n'),
    );
  });

  it('GIVEN no metric (an abort) THEN the subject says the reason and there is no metric line', () => {
    const msg = rollbackCommitMessage({
      namespace: 'shop',
      name: 'web',
      step: '1/3',
      canaryWeight: 5,
      reason: 'Aborted: aborted by the operator (sluice abort)',
      badRevision: SHA,
    });
    expect(msg.split('\n')[0]).toBe(
      'Roll back shop/web at step 1/3: Aborted: aborted by the operator (sluice abort)',
    );
    expect(msg).not.toContain('Failing metric');
    expect(trailerValues(msg, 'Sluice-Reverts')).toEqual([SHA]);
  });

  it('GIVEN a metric with no data THEN "no data" stands for the value', () => {
    const msg = rollbackCommitMessage({
      namespace: 'n',
      name: 'x',
      step: '1/1',
      canaryWeight: 50,
      reason: 'AnalysisFailed',
      metric: 'latency',
      threshold: '<= 500',
      badRevision: SHA,
    });
    expect(msg).toContain('latency = no data (threshold <= 500)');
  });
});

describe('revisionSha / trailerValues', () => {
  it.each([
    [`main@sha1:${SHA}`, SHA],
    [`sha1:${SHA}`, SHA],
    [SHA, SHA],
  ])('GIVEN %s THEN the sha', (rev, sha) => expect(revisionSha(rev)).toBe(sha));

  it('GIVEN a message with trailers THEN their values, case-insensitively by key', () => {
    expect(trailerValues('x\n\nsluice-reverts: abc\nSluice-Reverts:  def \n', 'Sluice-Reverts')).toEqual([
      'abc',
      'def',
    ]);
  });
});
