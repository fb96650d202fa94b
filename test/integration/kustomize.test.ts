import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { kubectlKustomize } from '../../src/delivery/kustomize.js';
import { renderDirectory } from '../../src/delivery/render.js';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'kustomize-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const base = {
  'base/kustomization.yaml': 'resources:\n  - cm.yaml\n',
  'base/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n',
};

describe('Kustomize overlays rendered by kubectl kustomize', () => {
  const roots: string[] = [];
  afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

  it('GIVEN an overlay with a namePrefix and a patch THEN render returns the built objects', async () => {
    const root = tree({
      ...base,
      'prod/kustomization.yaml':
        'resources:\n  - ../base\nnamePrefix: prod-\npatches:\n  - target: {kind: ConfigMap}\n    patch: |\n      - op: replace\n        path: /data/color\n        value: red\n',
    });
    roots.push(root);
    const result = await renderDirectory(root, 'prod', { kustomize: kubectlKustomize() });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(
      result.objects.map((o) => [
        o.object.metadata?.name,
        (o.object as { data?: { color?: string } }).data?.color,
      ]),
    ).toEqual([['prod-settings', 'red']]);
    expect(result.objects[0]!.origin.via).toBe('kustomize');
  });

  it('GIVEN a kustomization naming a missing file THEN KustomizeFailed naming the kustomization, nothing rendered', async () => {
    const root = tree({ 'app/kustomization.yaml': 'resources:\n  - missing.yaml\n' });
    roots.push(root);
    const result = await renderDirectory(root, 'app', { kustomize: kubectlKustomize() });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]!.message).toMatch(
      /^app\/kustomization\.yaml.*kustomize build failed: .*missing\.yaml/,
    );
  });

  it('GIVEN a kustomization reaching outside its root THEN kustomize refuses it', async () => {
    const root = tree({ ...base, 'app/kustomization.yaml': 'resources:\n  - ../base/cm.yaml\n' });
    roots.push(root);
    const result = await renderDirectory(root, 'app', { kustomize: kubectlKustomize() });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors[0]!.message).toContain('security');
  });
});
