import { describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { diffCache, objectKey } from './informer.js';

const obj = (name: string, rv: string, namespace?: string): KubernetesObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, resourceVersion: rv },
});

describe('objectKey', () => {
  it.each<[string, KubernetesObject, string]>([
    ['a namespaced object', obj('web', '1', 'prod'), 'prod/web'],
    ['a cluster-scoped object', obj('east', '1'), 'east'],
  ])('GIVEN %s THEN its key is %s', (_name, o, key) => {
    expect(objectKey(o)).toBe(key);
  });
});

describe('diffCache', () => {
  const m = (...objs: KubernetesObject[]) => new Map(objs.map((o) => [objectKey(o), o]));

  it('GIVEN an empty cache WHEN a list arrives THEN every object is an add', () => {
    expect(
      diffCache(m(), m(obj('a', '1', 'ns'), obj('b', '2', 'ns'))).map((c) => [c.type, objectKey(c.obj)]),
    ).toEqual([
      ['add', 'ns/a'],
      ['add', 'ns/b'],
    ]);
  });

  it('GIVEN a cache WHEN a relist differs THEN changed resourceVersions are updates, missing objects deletes, same ones nothing', () => {
    const prev = m(obj('same', '1', 'ns'), obj('changed', '1', 'ns'), obj('gone', '1', 'ns'));
    const next = m(obj('same', '1', 'ns'), obj('changed', '5', 'ns'), obj('new', '6', 'ns'));
    const changes = diffCache(prev, next);
    expect(changes.map((c) => [c.type, objectKey(c.obj), c.obj.metadata?.resourceVersion])).toEqual([
      ['update', 'ns/changed', '5'],
      ['add', 'ns/new', '6'],
      ['delete', 'ns/gone', '1'],
    ]);
    const update = changes[0]!;
    expect(update.type === 'update' && update.old.metadata?.resourceVersion).toBe('1');
  });

  it('GIVEN identical snapshots THEN there is nothing to emit', () => {
    expect(diffCache(m(obj('a', '1')), m(obj('a', '1')))).toEqual([]);
  });
});
