import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { eventName } from './events.js';

const release: KubernetesObject = {
  apiVersion: 'sluice.dev/v1',
  kind: 'CanaryRelease',
  metadata: { name: 'web', namespace: 'prod', uid: '1234' },
};

describe('eventName', () => {
  it('GIVEN the same object, type, reason and message THEN the name is the same (repeats aggregate)', () => {
    expect(eventName(release, 'Warning', 'RolledBack', 'error rate 7% > 5%')).toBe(
      eventName(release, 'Warning', 'RolledBack', 'error rate 7% > 5%'),
    );
  });

  it.each<[string, KubernetesObject, string, string]>([
    ['another message', release, 'RolledBack', 'error rate 9% > 5%'],
    ['another reason', release, 'Promoted', 'error rate 7% > 5%'],
    [
      'another object (same name, new uid)',
      { ...release, metadata: { ...release.metadata, uid: '5678' } },
      'RolledBack',
      'error rate 7% > 5%',
    ],
  ])('GIVEN %s THEN the name differs', (_name, obj, reason, message) => {
    expect(eventName(obj, 'Warning', reason, message)).not.toBe(
      eventName(release, 'Warning', 'RolledBack', 'error rate 7% > 5%'),
    );
  });

  it.each<[string, string]>([
    ['web', '^web\\.[0-9a-f]{16}$'],
    ['system:controller:Thing', '^system-controller-thing\\.[0-9a-f]{16}$'],
    ['x'.repeat(300), '^x{236}\\.[0-9a-f]{16}$'],
  ])('GIVEN object name %s THEN the event name is a valid DNS subdomain', (name, pattern) => {
    const n = eventName({ ...release, metadata: { name } }, 'Normal', 'R', 'm');
    expect(n).toMatch(new RegExp(pattern));
    expect(n.length).toBeLessThanOrEqual(253);
  });
});
