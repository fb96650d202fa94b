import { fixManifestText } from './file-fix.js';
import { applyEdits, parseDocuments } from './yaml-edit.js';

// What the YAML writer keeps of what a person wrote, seen through the fixer.
describe('writing a rewritten object back into its YAML', () => {
  it.each([
    [
      'a comment above a renamed key moves with it',
      'apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: d\nspec:\n  # the catch-all\n  backend:\n    serviceName: a\n    servicePort: 80\n',
      'spec:\n  # the catch-all\n  defaultBackend:\n',
    ],
    [
      'an alias to an unchanged anchor stays an alias',
      'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: c\n  labels: &l {a: b}\nspec:\n  jobTemplate:\n    metadata:\n      labels: *l\n',
      '  labels: &l {a: b}\nspec:\n  jobTemplate:\n    metadata:\n      labels: *l\n',
    ],
    [
      'CRLF line endings stay CRLF',
      'apiVersion: batch/v1beta1\r\nkind: CronJob\r\nmetadata:\r\n  name: d\r\n',
      'apiVersion: batch/v1\r\nkind: CronJob\r\nmetadata:\r\n  name: d\r\n',
    ],
    [
      'a header comment before the first --- stays',
      '# header\n---\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: a\n',
      '# header\n---\napiVersion: batch/v1\n',
    ],
    [
      'sequences indented under their key stay indented',
      'apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: i\nspec:\n  rules:\n    - http:\n        paths:\n          - path: /\n            backend:\n              serviceName: a\n              servicePort: 80\n',
      '          - path: /\n            pathType: ImplementationSpecific',
    ],
  ])('GIVEN %s', (_, input, expected) => {
    expect(fixManifestText(input, '1.29').after).toContain(expected);
  });

  it('GIVEN a trailing comment of one document and a blank line before the next --- THEN both stay', () => {
    const text =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n# trailing\n---\n# head\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: b\n\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n';
    expect(fixManifestText(text, '1.29').after).toBe(text.replace('batch/v1beta1', 'batch/v1'));
  });

  it('GIVEN a value equal to what a node held before it was changed in place THEN the old content is written, not the new', () => {
    const text = 'a:\n  x: 1 # one\nb: 2\n';
    const { docs } = parseDocuments(text);
    const after = applyEdits(text, docs, [
      { docIndex: 0, value: { a: { x: 2 }, c: { x: 1 } }, comments: [] },
    ]);
    expect(after).toBe('a:\n  x: 2 # one\nc:\n  x: 1\n');
  });
});
