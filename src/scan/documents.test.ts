import { scanText } from './documents.js';

describe('scanText', () => {
  it('GIVEN multi-document YAML WHEN scanned THEN each object with the line of its apiVersion', () => {
    const text = [
      '# comment',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: { name: a, namespace: n }',
      '---',
      'kind: Ingress',
      'apiVersion: extensions/v1beta1',
      'metadata:',
      '  name: web',
    ].join('\n');
    const { objects, problems } = scanText(text);
    expect(problems).toEqual([]);
    expect(objects.map((o) => [o.apiVersion, o.kind, o.name, o.namespace, o.line, o.docIndex])).toEqual([
      ['v1', 'ConfigMap', 'a', 'n', 2, 0],
      ['extensions/v1beta1', 'Ingress', 'web', undefined, 7, 1],
    ]);
  });

  it('GIVEN a List WHEN scanned THEN each item is an object with its item path, the List itself is not', () => {
    const text = [
      'apiVersion: v1',
      'kind: List',
      'items:',
      '  - apiVersion: apps/v1',
      '    kind: Deployment',
      '    metadata: { name: d }',
      '  - apiVersion: batch/v1beta1',
      '    kind: CronJob',
      '    metadata: { name: c }',
    ].join('\n');
    const { objects } = scanText(text);
    expect(objects.map((o) => [o.apiVersion, o.kind, o.itemPath, o.line])).toEqual([
      ['apps/v1', 'Deployment', 'items[0]', 4],
      ['batch/v1beta1', 'CronJob', 'items[1]', 7],
    ]);
  });

  it('GIVEN apiVersion strings nested inside an object (CSV alm-examples, a field) WHEN scanned THEN only the top-level object counts', () => {
    const text = [
      'apiVersion: operators.coreos.com/v1alpha1',
      'kind: ClusterServiceVersion',
      'metadata:',
      '  name: x',
      '  annotations:',
      `    alm-examples: '[{"apiVersion":"extensions/v1beta1","kind":"Ingress"}]'`,
      'spec:',
      '  nested:',
      '    apiVersion: policy/v1beta1',
      '    kind: PodSecurityPolicy',
    ].join('\n');
    expect(scanText(text).objects.map((o) => `${o.apiVersion} ${o.kind}`)).toEqual([
      'operators.coreos.com/v1alpha1 ClusterServiceVersion',
    ]);
  });

  it('GIVEN JSON, a values file and an object without metadata.name WHEN scanned THEN JSON is read, the values file yields nothing, the nameless object still counts', () => {
    expect(
      scanText('{"apiVersion":"autoscaling/v2beta2","kind":"HorizontalPodAutoscaler"}').objects,
    ).toHaveLength(1);
    expect(scanText('replicas: 3\nimage: nginx\n').objects).toEqual([]);
    expect(scanText('apiVersion: batch/v1beta1\nkind: CronJob\n').objects[0]?.name).toBeUndefined();
  });

  it('GIVEN invalid YAML in one document WHEN scanned THEN a problem with its line, and the other documents are still read', () => {
    const text =
      'apiVersion: v1\nkind: ConfigMap\n---\nkey: [unclosed\n---\napiVersion: batch/v1beta1\nkind: CronJob\n';
    const { objects, problems } = scanText(text);
    expect(problems).toHaveLength(1);
    expect(problems[0]!.line).toBeGreaterThanOrEqual(4);
    expect(problems[0]!.message).toMatch(/^invalid YAML/);
    expect(objects.map((o) => o.kind)).toEqual(['ConfigMap', 'CronJob']);
  });
});
