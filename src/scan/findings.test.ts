import {
  exitCodeOf,
  fixCommand,
  formatFindingLocation,
  judge,
  servedSince,
  type ScanReport,
} from './findings.js';

const at = { location: { file: 'a.yaml', line: 3 }, source: 'file' as const, fixPath: 'a.yaml' };

describe('judge', () => {
  it('GIVEN a removed apiVersion WHEN judged THEN removed with the replacement at the target and the fix command', () => {
    const f = judge({ apiVersion: 'extensions/v1beta1', kind: 'Ingress', name: 'web' }, '1.29', at);
    expect(f).toMatchObject({
      status: 'removed',
      removedIn: '1.22',
      replacement: { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' },
      fix: 'sluice fix a.yaml --target-version 1.29',
      ruleId: 'extensions-v1beta1-Ingress',
    });
  });

  it('GIVEN a deprecated-not-removed apiVersion WHEN judged THEN deprecated; before its deprecation THEN nothing', () => {
    expect(judge({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget' }, '1.22', at)?.status).toBe(
      'deprecated',
    );
    expect(judge({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget' }, '1.20', at)).toBeUndefined();
  });

  it('GIVEN a GA or custom apiVersion WHEN judged THEN nothing', () => {
    expect(judge({ apiVersion: 'apps/v1', kind: 'Deployment' }, '1.36', at)).toBeUndefined();
    expect(judge({ apiVersion: 'example.com/v1beta1', kind: 'Widget' }, '1.36', at)).toBeUndefined();
  });

  it('GIVEN a replacement newer than the target WHEN judged THEN unavailable, naming the release that serves it', () => {
    expect(servedSince('policy/v1', 'PodDisruptionBudget')).toBe('1.21');
    const f = judge({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, '1.20', at);
    expect(f?.status).toBe('unavailable');
    expect(f?.note).toContain('served from Kubernetes 1.21');
    expect(judge({ apiVersion: 'policy/v1', kind: 'PodDisruptionBudget' }, '1.21', at)).toBeUndefined();
  });
});

describe('exitCodeOf', () => {
  const report = (statuses: string[], errors = 0): ScanReport => ({
    targetVersion: '1.29',
    scanned: 1,
    findings: statuses.map(
      (status) =>
        ({ ...judge({ apiVersion: 'extensions/v1beta1', kind: 'Ingress' }, '1.29', at)!, status }) as never,
    ),
    notices: Array.from({ length: errors }, () => ({ path: 'x', level: 'error' as const, message: 'm' })),
  });
  it.each([
    [[], 0, 0],
    [['deprecated'], 0, 3],
    [['deprecated', 'removed'], 0, 4],
    [['unavailable'], 0, 4],
    [['removed'], 1, 2],
  ])('GIVEN findings %j and %d errors THEN exit %d', (statuses, errors, code) => {
    expect(exitCodeOf(report(statuses as string[], errors as number))).toBe(code);
  });
});

describe('formatting helpers', () => {
  it('GIVEN paths with spaces or quotes WHEN a fix command is made THEN they are shell-quoted', () => {
    expect(fixCommand('deploy/a.yaml', '1.29')).toBe('sluice fix deploy/a.yaml --target-version 1.29');
    expect(fixCommand("my dir/it's.yaml", '1.29')).toBe(
      `sluice fix 'my dir/it'\\''s.yaml' --target-version 1.29`,
    );
  });
  it('GIVEN a file and a cluster location THEN file:line and cluster/ns/name', () => {
    expect(formatFindingLocation({ file: 'a.yaml', line: 3, itemPath: 'items[1]' })).toBe(
      'a.yaml:3 (items[1])',
    );
    expect(formatFindingLocation({ cluster: 'kind', namespace: 'ns', name: 'web' })).toBe(
      'cluster kind/ns/web',
    );
  });
});
