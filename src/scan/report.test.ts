import { judge, type ScanReport } from './findings.js';
import { API_REMOVALS } from './removals.js';
import { formatJson, formatSarif, formatText } from './report.js';

const report: ScanReport = {
  targetVersion: '1.29',
  scanned: 3,
  findings: [
    judge({ apiVersion: 'extensions/v1beta1', kind: 'Ingress', name: 'web' }, '1.29', {
      location: { file: 'deploy/ingress.yaml', line: 2 },
      source: 'file',
      fixPath: 'deploy/ingress.yaml',
    })!,
    judge({ apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3', kind: 'FlowSchema', name: 'fs' }, '1.29', {
      location: { cluster: 'prod', name: 'fs' },
      source: 'cluster',
      detail: 'managedFields',
    })!,
  ],
  notices: [{ path: 'charts/x', level: 'error', message: 'cannot list' }],
};

describe('report formats', () => {
  it('GIVEN findings WHEN printed as text THEN one line each with status, replacement, fix, and a summary', () => {
    const text = formatText(report);
    expect(text).toContain(
      'deploy/ingress.yaml:2: REMOVED extensions/v1beta1 Ingress web (removed in 1.22); use networking.k8s.io/v1 Ingress',
    );
    expect(text).toContain('    fix: sluice fix deploy/ingress.yaml --target-version 1.29');
    expect(text).toContain(
      'cluster prod/fs: DEPRECATED flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema fs (deprecated in 1.29, removed in 1.32)',
    );
    expect(text).toContain('charts/x: error: cannot list');
    expect(text.trim().split('\n').pop()).toBe(
      'scanned 3 objects for Kubernetes 1.29: 1 removed or not served, 1 deprecated, 1 errors',
    );
  });

  it('GIVEN findings WHEN printed as JSON THEN the report round-trips', () => {
    expect(JSON.parse(formatJson(report))).toEqual(JSON.parse(JSON.stringify(report)));
  });

  it('GIVEN findings WHEN printed as SARIF THEN 2.1.0 with one rule per table row, results referring to them, and the error as a notification', () => {
    const sarif = JSON.parse(formatSarif(report, '0.1.0'));
    expect(sarif.version).toBe('2.1.0');
    const run = sarif.runs[0];
    expect(run.tool.driver.rules).toHaveLength(API_REMOVALS.length);
    const ids = new Set(run.tool.driver.rules.map((r: { id: string }) => r.id));
    expect(ids.size).toBe(API_REMOVALS.length);
    expect(run.results.map((r: { ruleId: string; level: string }) => [r.ruleId, r.level])).toEqual([
      ['extensions-v1beta1-Ingress', 'error'],
      ['flowcontrol.apiserver.k8s.io-v1beta3-FlowSchema', 'warning'],
    ]);
    for (const r of run.results) expect(ids.has(r.ruleId)).toBe(true);
    expect(run.results[0].locations[0].physicalLocation).toEqual({
      artifactLocation: { uri: 'deploy/ingress.yaml' },
      region: { startLine: 2 },
    });
    expect(run.results[1].locations[0].logicalLocations[0].fullyQualifiedName).toBe('cluster prod/fs');
    expect(run.invocations[0]).toMatchObject({ executionSuccessful: false });
    expect(run.invocations[0].toolExecutionNotifications[0].message.text).toBe('charts/x: cannot list');
  });
});
