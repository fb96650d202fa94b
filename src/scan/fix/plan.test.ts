import { API_REMOVALS, LATEST_KNOWN_KUBE_VERSION, removalApiVersion } from '../removals.js';
import { planObject } from './plan.js';

describe('planObject', () => {
  it('GIVEN an apiVersion that is fine at the target THEN keep', () => {
    expect(planObject({ apiVersion: 'batch/v1beta1', kind: 'CronJob' }, '1.20').action).toBe('keep');
    expect(planObject({ apiVersion: 'apps/v1', kind: 'Deployment' }, '1.29').action).toBe('keep');
    expect(planObject({ apiVersion: 'example.com/v1', kind: 'Thing' }, '1.29').action).toBe('keep');
  });

  it('GIVEN deprecated (not removed) at the target THEN fixed already', () => {
    const out = planObject({ apiVersion: 'batch/v1beta1', kind: 'CronJob', metadata: { name: 'c' } }, '1.21');
    expect(out).toMatchObject({ action: 'fix', status: 'deprecated', object: { apiVersion: 'batch/v1' } });
  });

  it('GIVEN a flowcontrol beta removed at a target that does not serve v1 yet THEN the interim version', () => {
    const out = planObject(
      { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta1', kind: 'FlowSchema', metadata: { name: 'f' } },
      '1.27',
    );
    expect(out).toMatchObject({
      action: 'fix',
      object: { apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3' },
    });
  });

  it('GIVEN deprecated at a target that does not serve what the fixer writes THEN skip, with the reason', () => {
    // autoscaling/v2beta1 is deprecated in 1.22, but autoscaling/v2 is served only from 1.23.
    const out = planObject({ apiVersion: 'autoscaling/v2beta1', kind: 'HorizontalPodAutoscaler' }, '1.22');
    expect(out).toMatchObject({ action: 'skip', reason: expect.stringContaining('autoscaling/v2') });
  });

  it('GIVEN a PodSecurityPolicy at 1.25+ THEN FLAG: nothing replaces it', () => {
    expect(planObject({ apiVersion: 'policy/v1beta1', kind: 'PodSecurityPolicy' }, '1.29').action).toBe(
      'flag',
    );
  });

  // The fixer's answer for every row of the removal table, at the newest version it knows:
  // never "keep" for a removed row, never a crash, and a FLAG always says why.
  it.each(API_REMOVALS.map((r) => [removalApiVersion(r), r.kind, r.removedIn] as const))(
    'GIVEN %s %s (removed in %s) at the latest version THEN fixed or flagged with a reason',
    (apiVersion, kind, removedIn) => {
      const out = planObject(
        {
          apiVersion,
          kind,
          metadata: { name: 'x' },
          spec: { template: { metadata: { labels: { app: 'x' } } } },
        },
        LATEST_KNOWN_KUBE_VERSION,
      );
      if (removedIn === null) return expect(['keep', 'fix', 'flag', 'skip']).toContain(out.action);
      expect(['fix', 'flag']).toContain(out.action);
      if (out.action === 'flag') for (const f of out.flags) expect(f.reason.length).toBeGreaterThan(20);
    },
  );
});
