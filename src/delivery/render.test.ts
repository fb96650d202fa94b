import { mkdtemp, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { renderDirectory, renderProblems, safeToPrune, type RenderResult } from './render.js';

/** Files by path relative to the root; a value `{ link }` makes a symlink to that target. */
type Fixture = Record<string, string | { link: string }>;

const roots: string[] = [];

async function fixture(files: Fixture): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'sluice-render-'));
  roots.push(root);
  for (const [path, content] of Object.entries(files)) {
    const full = join(root, path);
    await mkdir(dirname(full), { recursive: true });
    if (typeof content === 'string') await writeFile(full, content);
    else await symlink(content.link, full);
  }
  return root;
}

afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

const cm = (name: string, ns = 'default'): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n`;

function messages(result: RenderResult): string[] {
  if (result.ok) throw new Error(`expected a failed render, got ${result.objects.length} objects`);
  return result.errors.map((e) => e.message);
}

function summary(result: RenderResult): string[] {
  if (!result.ok) throw new Error(`expected success, got: ${result.errors.map((e) => e.message).join('; ')}`);
  return result.objects.map(
    (o) =>
      `${o.object.kind}/${o.object.metadata.name} @ ${o.origin.file}:${o.origin.line}:${o.origin.col}` +
      ` doc ${o.origin.docIndex}${o.origin.itemPath ? ` ${o.origin.itemPath}` : ''}${o.origin.via ? ` via ${o.origin.via}` : ''}`,
  );
}

describe('renderDirectory', () => {
  it('GIVEN nested dirs with multi-document YAML, JSON, a List and empty documents WHEN rendered THEN every object is returned in code-point order with its origin', async () => {
    const root = await fixture({
      'deploy/a.yaml': `# leading comment\n---\n${cm('one')}---\n---\n${cm('two')}`,
      'deploy/B.yml': cm('upper'),
      'deploy/sub/list.yaml': [
        'apiVersion: v1',
        'kind: List',
        'items:',
        '  - apiVersion: v1',
        '    kind: Secret',
        '    metadata: {name: s1, namespace: default}',
        '  - apiVersion: v1',
        '    kind: ConfigMapList',
        '    items:',
        '      - {apiVersion: v1, kind: ConfigMap, metadata: {name: nested, namespace: default}}',
        '',
      ].join('\n'),
      'deploy/sub/ns.json':
        '{\n  "apiVersion": "v1",\n  "kind": "Namespace",\n  "metadata": {"name": "team"}\n}\n',
      'deploy/sub/empty.yaml': '---\n# nothing here\n',
      'deploy/README.md': '# not yaml',
    });

    const result = await renderDirectory(root, 'deploy');

    expect(summary(result)).toEqual([
      'ConfigMap/upper @ deploy/B.yml:1:1 doc 0',
      'ConfigMap/one @ deploy/a.yaml:3:1 doc 0',
      'ConfigMap/two @ deploy/a.yaml:10:1 doc 2',
      'Secret/s1 @ deploy/sub/list.yaml:4:5 doc 0 items[0]',
      'ConfigMap/nested @ deploy/sub/list.yaml:10:9 doc 0 items[1].items[0]',
      'Namespace/team @ deploy/sub/ns.json:1:1 doc 0',
    ]);
  });

  it.each<[string, string]>([
    ['a leading ./', './deploy'],
    ['a leading / (the artifact root, as Flux reads it)', '/deploy'],
    ['a trailing slash', 'deploy/'],
  ])('GIVEN a path with %s WHEN rendered THEN it resolves inside the root', async (_what, path) => {
    const root = await fixture({ 'deploy/a.yaml': cm('x') });

    const result = await renderDirectory(root, path);

    expect(summary(result)).toEqual(['ConfigMap/x @ deploy/a.yaml:1:1 doc 0']);
  });

  it('GIVEN hidden files, a values file and non-manifest extensions WHEN rendered THEN they are not objects and only the YAML non-manifest is listed as skipped', async () => {
    const root = await fixture({
      'a.yaml': cm('x'),
      '.sops.yaml': 'creation_rules: []\n',
      '.github/workflow.yaml': 'on: push\n',
      'values.yaml': 'replicaCount: 2\nimage:\n  tag: v1\n',
      'list.json': '[1, 2]\n',
      'notes.txt': 'apiVersion: v1',
    });

    const result = await renderDirectory(root, '.');

    expect(result).toEqual({
      ok: true,
      objects: [expect.objectContaining({ object: expect.objectContaining({ kind: 'ConfigMap' }) })],
      skipped: [
        { file: 'list.json', reason: 'no document has apiVersion or kind' },
        { file: 'values.yaml', reason: 'no document has apiVersion or kind' },
      ],
    });
  });

  it.each<[string, Fixture, string[]]>([
    [
      'a duplicate key',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  name: y\n' },
      ['a.yaml:5:3: invalid YAML: Map keys must be unique'],
    ],
    [
      'an unterminated flow sequence',
      { 'a.yaml': `${cm('x')}---\napiVersion: v1\nkind: ConfigMap\ndata: [1, 2\n` }, // reported where the ] was due
      [
        'a.yaml:10:1: invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
      ],
    ],
    [
      'an alias without an anchor',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: *meta\n' },
      ['a.yaml:1:1: invalid YAML: Unresolved alias (the anchor must be set before the alias): meta'],
    ],
    [
      'a sequence document next to a manifest',
      { 'a.yaml': `${cm('x')}---\n- a\n- b\n` },
      ['a.yaml:7:1: document is a sequence, not a mapping (a Kubernetes object)'],
    ],
    [
      'a scalar document next to a manifest',
      { 'a.yaml': `${cm('x')}---\njust text\n` },
      ['a.yaml:7:1: document is string "just text", not a mapping (a Kubernetes object)'],
    ],
    [
      'no apiVersion',
      { 'a.yaml': 'kind: ConfigMap\nmetadata:\n  name: x\n' },
      ['a.yaml:1:1: missing apiVersion'],
    ],
    [
      'no kind and no name',
      { 'a.yaml': 'apiVersion: v1\nmetadata:\n  labels: {a: b}\n' },
      ['a.yaml:1:1: missing kind', 'a.yaml:1:1: missing metadata.name'],
    ],
    [
      'no metadata',
      { 'a.yaml': 'apiVersion: v1\nkind: ConfigMap\ndata: {}\n' },
      ['a.yaml:1:1: missing metadata.name'],
    ],
    [
      'generateName instead of name',
      { 'a.yaml': 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n' },
      [
        'a.yaml:1:1: missing metadata.name (generateName cannot be applied declaratively: each apply would create a new object)',
      ],
    ],
    [
      'a numeric kind and an empty name',
      { 'a.yaml': 'apiVersion: v1\nkind: 3\nmetadata:\n  name: ""\n' },
      [
        'a.yaml:2:7: kind must be a non-empty string, got number 3',
        'a.yaml:4:9: metadata.name must be a non-empty string, got string ""',
      ],
    ],
    [
      'an unquoted numeric label value',
      {
        'a.yaml':
          'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    app.kubernetes.io/version: 1.0\n',
      },
      [
        'a.yaml:6:32: metadata.labels.app.kubernetes.io/version must be a string, got number 1 (quote it in YAML)',
      ],
    ],
    [
      'a List whose items is a mapping',
      { 'a.yaml': 'apiVersion: v1\nkind: List\nitems:\n  a: b\n' },
      ['a.yaml:4:3: List items must be a sequence, got a mapping'],
    ],
    [
      'a List item without kind and a scalar item',
      {
        'a.yaml': 'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    metadata: {name: a}\n  - 42\n',
      },
      ['a.yaml:4:5: missing kind', 'a.yaml:6:5: items[1] is number 42, not a mapping (a Kubernetes object)'],
    ],
    [
      'the same object in two files (apiVersion differs, group is the same)',
      {
        'a.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: prod}\n',
        'b/c.yaml': `${cm('x')}---\napiVersion: apps/v1beta2\nkind: Deployment\nmetadata: {name: web, namespace: prod}\n`,
      },
      ['b/c.yaml:7:1: duplicate object apps/Deployment/prod/web: also defined at a.yaml:1:1'],
    ],
    [
      'problems in several files',
      {
        'a.yaml': 'kind: ConfigMap\nmetadata: {name: a}\n',
        'b.yaml': 'apiVersion: v1\nkind: ConfigMap\n',
        'c.yaml': cm('ok'),
      },
      ['a.yaml:1:1: missing apiVersion', 'b.yaml:1:1: missing metadata.name'],
    ],
  ])(
    'GIVEN %s WHEN rendered THEN every error is reported with file:line:col',
    async (_what, files, expected) => {
      const root = await fixture(files);

      const result = await renderDirectory(root, '.');

      expect(messages(result)).toEqual(expected);
      expect(result).toMatchObject({ ok: false, reason: 'Invalid' });
      expect(safeToPrune(result)).toBe(false);
    },
  );

  it.each<[string, string, string]>([
    ['../ out of the root', '../elsewhere', '../elsewhere: path leads outside the artifact root'],
    ['../ hidden in the middle', 'deploy/../../x', 'deploy/../../x: path leads outside the artifact root'],
    ['a directory that does not exist', 'nope', 'nope: path does not exist in the artifact'],
    ['a file instead of a directory', 'deploy/a.yaml', 'deploy/a.yaml: path is not a directory'],
  ])(
    'GIVEN a path with %s WHEN rendered THEN it fails without reading anything',
    async (_what, path, expected) => {
      const root = await fixture({ 'deploy/a.yaml': cm('x') });

      const result = await renderDirectory(root, path);

      expect(messages(result)).toEqual([expected]);
    },
  );

  it('GIVEN symlinks out of the root, a broken one and one inside WHEN rendered THEN the escaping and broken ones are errors and the inside one renders under its link path', async () => {
    const outside = await fixture({ 'secret.yaml': cm('stolen'), 'dir/x.yaml': cm('alsostolen') });
    const root = await fixture({
      'shared/common.yaml': cm('common'),
      'deploy/common.yaml': { link: '../shared/common.yaml' },
      'deploy/escape.yaml': { link: join(outside, 'secret.yaml') },
      'deploy/escapedir': { link: join(outside, 'dir') },
      'deploy/broken.yaml': { link: 'missing.yaml' },
    });

    const result = await renderDirectory(root, 'deploy');

    expect(messages(result)).toEqual([
      'deploy/broken.yaml: symlink target missing.yaml does not exist',
      `deploy/escape.yaml: symlink to ${join(outside, 'secret.yaml')} leads outside the artifact root`,
      `deploy/escapedir: symlink to ${join(outside, 'dir')} leads outside the artifact root`,
    ]);
  });

  it('GIVEN a symlink to a file inside the root WHEN rendered THEN the object carries the link path as its origin', async () => {
    const root = await fixture({
      'shared/common.yaml': cm('common'),
      'deploy/common.yaml': { link: '../shared/common.yaml' },
    });

    expect(summary(await renderDirectory(root, 'deploy'))).toEqual([
      'ConfigMap/common @ deploy/common.yaml:1:1 doc 0',
    ]);
  });

  it('GIVEN the path itself is a symlink out of the root WHEN rendered THEN it fails', async () => {
    const outside = await fixture({ 'a.yaml': cm('x') });
    const root = await fixture({ deploy: { link: outside } });

    expect(messages(await renderDirectory(root, 'deploy'))).toEqual([
      'deploy: path resolves through a symlink to outside the artifact root',
    ]);
  });

  it('GIVEN a symlink cycle WHEN rendered THEN each directory is walked once', async () => {
    const root = await fixture({ 'deploy/a.yaml': cm('x'), 'deploy/loop': { link: '.' } });

    expect(summary(await renderDirectory(root, 'deploy'))).toEqual(['ConfigMap/x @ deploy/a.yaml:1:1 doc 0']);
  });

  it('GIVEN a kustomization and no runner WHEN rendered THEN the result is a typed NeedsKustomize marker, never objects', async () => {
    const root = await fixture({
      'deploy/kustomization.yaml': 'resources: [a.yaml]\n',
      'deploy/a.yaml': cm('x'),
    });

    const result = await renderDirectory(root, 'deploy');

    expect(result).toMatchObject({
      ok: false,
      reason: 'NeedsKustomize',
      kustomizations: ['deploy/kustomization.yaml'],
    });
    expect(messages(result)).toEqual([
      'deploy/kustomization.yaml: directory is a kustomization; no kustomize runner is configured',
    ]);
    expect(safeToPrune(result)).toBe(false);
  });

  it('GIVEN plain manifests and a kustomized sub-directory WHEN rendered with a runner THEN the runner builds that directory and its output carries the kustomization as origin', async () => {
    const root = await fixture({
      'deploy/a.yaml': cm('plain'),
      'deploy/app/kustomization.yml': 'resources: [x.yaml]\n',
      'deploy/app/x.yaml': 'this file is only read by kustomize',
    });
    const calls: string[] = [];
    const kustomize = async (dir: string): Promise<string> => {
      calls.push(dir);
      return `${cm('built-1')}---\n${cm('built-2')}`;
    };

    const result = await renderDirectory(root, 'deploy', { kustomize });

    expect(calls).toHaveLength(1);
    expect(calls[0]?.endsWith(join('deploy', 'app'))).toBe(true);
    expect(summary(result)).toEqual([
      'ConfigMap/plain @ deploy/a.yaml:1:1 doc 0',
      'ConfigMap/built-1 @ deploy/app/kustomization.yml:1:1 doc 0 via kustomize',
      'ConfigMap/built-2 @ deploy/app/kustomization.yml:7:1 doc 1 via kustomize',
    ]);
  });

  it('GIVEN a runner that fails or emits a bad object WHEN rendered THEN the errors name the kustomization', async () => {
    const root = await fixture({ 'a/kustomization.yaml': '', 'b/kustomization.yaml': '' });
    const kustomize = async (dir: string): Promise<string> => {
      if (dir.endsWith('a')) throw new Error('accumulating resources: missing.yaml: no such file');
      return 'apiVersion: v1\nkind: ConfigMap\n';
    };

    const result = await renderDirectory(root, '.', { kustomize });

    expect(messages(result)).toEqual([
      'a/kustomization.yaml: kustomize build failed: accumulating resources: missing.yaml: no such file',
      'b/kustomization.yaml (kustomize build output line 1): missing metadata.name',
    ]);
  });

  it('GIVEN an empty directory WHEN rendered THEN it succeeds with no objects and is not safe to prune', async () => {
    const root = await fixture({ 'deploy/.keep': '' });

    const result = await renderDirectory(root, 'deploy');

    expect(result).toEqual({ ok: true, objects: [], skipped: [] });
    expect(safeToPrune(result)).toBe(false);
  });

  it('GIVEN a non-empty successful render WHEN asked THEN it is safe to prune', async () => {
    const root = await fixture({ 'a.yaml': cm('x') });

    expect(safeToPrune(await renderDirectory(root, '.'))).toBe(true);
  });

  it('GIVEN YAML 1.1 booleans WHEN rendered THEN they stay strings as kustomize (YAML 1.2) reads them', async () => {
    const root = await fixture({ 'a.yaml': `${cm('x')}data:\n  enabled: on\n  country: NO\n  real: true\n` });

    const result = await renderDirectory(root, '.');

    expect(result.ok && result.objects[0]?.object.data).toEqual({ enabled: 'on', country: 'NO', real: true });
  });
});

describe('renderProblems', () => {
  it('GIVEN a failed render THEN one line per error, each starting with file:line:col', async () => {
    const root = await fixture({ 'deploy/a.yaml': 'kind: ConfigMap\nmetadata: {name: a}\n' });
    const result = await renderDirectory(root, 'deploy');
    expect(renderProblems(result, 'deploy')).toEqual([expect.stringMatching(/^deploy\/a\.yaml:1:1: /)]);
  });

  it('GIVEN an empty render THEN one line saying the path holds no objects (it never applies or prunes)', async () => {
    const root = await fixture({ 'deploy/README.md': 'nothing here\n' });
    expect(renderProblems(await renderDirectory(root, 'deploy'), 'deploy')).toEqual([
      'path deploy holds no objects (an empty render never applies or prunes)',
    ]);
  });

  it('GIVEN a render with objects THEN no problems, exactly when safeToPrune', async () => {
    const root = await fixture({ 'deploy/a.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n' });
    const result = await renderDirectory(root, 'deploy');
    expect(renderProblems(result, 'deploy')).toEqual([]);
    expect(safeToPrune(result)).toBe(true);
  });
});
