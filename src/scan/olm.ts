/**
 * OLM bundles (`manifests/` + `metadata/annotations.yaml`): the highest OpenShift version a
 * bundle says it supports, from the CSV's `olm.maxOpenShiftVersion` property and the bundle's
 * `com.redhat.openshift.versions` annotation, and the OpenShift ↔ Kubernetes version map. A
 * bundle capped below the OpenShift release that matches the target is not installable there,
 * so its old apiVersions are not a breakage: the scan reports it as capped.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { compareKubeVersions, parseKubeVersion } from './removals.js';

/** True when `dir` has a `manifests/` directory and `metadata/annotations.yaml`. */
export async function isOlmBundle(dir: string): Promise<boolean> {
  const isDir = await stat(join(dir, 'manifests')).then(
    (s) => s.isDirectory(),
    () => false,
  );
  const hasAnn = await stat(join(dir, 'metadata', 'annotations.yaml')).then(
    (s) => s.isFile(),
    () => false,
  );
  return isDir && hasAnn;
}

// OpenShift 4.1 shipped Kubernetes 1.13, 4.2 shipped 1.14, 4.3 shipped 1.16; from 4.3 on each
// minor is Kubernetes minor - 13 (4.16 = 1.29).
const EARLY: Record<number, number> = { 1: 13, 2: 14 };

/** The Kubernetes minor version an OpenShift 4.x release ships ('4.16' → '1.29'). */
export function openShiftToKube(ocp: string): string {
  const { major, minor } = parseKubeVersion(ocp);
  if (major !== 4) throw new Error(`unsupported OpenShift version ${ocp}: only 4.x is mapped`);
  return `1.${EARLY[minor] ?? minor + 13}`;
}

/** The OpenShift 4.x release that ships a Kubernetes version ('1.29' → '4.16'); undefined before 4.1. */
export function kubeToOpenShift(kube: string): string | undefined {
  const { minor } = parseKubeVersion(kube);
  for (const [o, k] of Object.entries(EARLY)) if (k === minor) return `4.${o}`;
  return minor >= 16 ? `4.${minor - 13}` : undefined;
}

/**
 * The cap a `com.redhat.openshift.versions` value sets: `v4.6-v4.8` → 4.8, `=v4.8` → 4.8;
 * undefined for an open range (`v4.6`) or the legacy list form (`v4.5,v4.6`, which means 4.5+).
 */
export function capFromOpenShiftVersions(value: string): string | undefined {
  const v = value.trim();
  const exact = /^=\s*v?(\d+\.\d+)$/.exec(v);
  if (exact) return exact[1];
  const range = /^v?\d+\.\d+\s*-\s*v?(\d+\.\d+)$/.exec(v);
  return range?.[1];
}

/** A bundle's cap and where it was read. */
export interface BundleCap {
  readonly maxOpenShiftVersion: string;
  readonly source: string;
}

/**
 * The lowest cap a bundle declares (CSV `olm.properties` `olm.maxOpenShiftVersion`, the
 * bundle's `com.redhat.openshift.versions`); undefined when uncapped. `csvs` are the
 * ClusterServiceVersion objects of `manifests/`. Throws naming the field when a cap is unreadable.
 */
export async function bundleCap(
  dir: string,
  csvs: readonly Record<string, unknown>[],
): Promise<BundleCap | undefined> {
  const caps: BundleCap[] = [];
  const annText = await readFile(join(dir, 'metadata', 'annotations.yaml'), 'utf8');
  const ann = (parse(annText) as { annotations?: Record<string, unknown> } | null)?.annotations ?? {};
  const versions = ann['com.redhat.openshift.versions'];
  if (typeof versions === 'string') {
    const cap = capFromOpenShiftVersions(versions);
    if (cap) {
      caps.push({
        maxOpenShiftVersion: cap,
        source: `metadata/annotations.yaml com.redhat.openshift.versions "${versions}"`,
      });
    }
  }
  for (const csv of csvs) {
    const meta = (csv.metadata ?? {}) as { name?: string; annotations?: Record<string, string> };
    const props = meta.annotations?.['olm.properties'];
    if (!props) continue;
    let list: unknown;
    try {
      list = JSON.parse(props);
    } catch (err) {
      throw new Error(
        `CSV ${meta.name ?? '?'} metadata.annotations["olm.properties"] is not JSON: ${(err as Error).message}`,
      );
    }
    for (const p of Array.isArray(list) ? list : []) {
      const { type, value } = (p ?? {}) as { type?: unknown; value?: unknown };
      if (type !== 'olm.maxOpenShiftVersion') continue;
      const v = String(value).replace(/^v/, '');
      const m = /^(\d+\.\d+)/.exec(v);
      if (!m) {
        throw new Error(
          `CSV ${meta.name ?? '?'} olm.maxOpenShiftVersion ${JSON.stringify(value)} is not a version like 4.8`,
        );
      }
      caps.push({ maxOpenShiftVersion: m[1]!, source: `CSV ${meta.name ?? '?'} olm.maxOpenShiftVersion` });
    }
  }
  caps.sort((a, b) => compareKubeVersions(a.maxOpenShiftVersion, b.maxOpenShiftVersion));
  return caps[0];
}

/** True when a bundle capped at `cap` cannot be installed on the OpenShift matching `targetKube`. */
export function cappedBelow(cap: BundleCap, targetKube: string): boolean {
  const ocp = kubeToOpenShift(targetKube);
  return ocp !== undefined && compareKubeVersions(cap.maxOpenShiftVersion, ocp) < 0;
}
