import { clusterClient, loadKubeConfig } from '../../kube/clients.js';
import { kubectlKustomize } from '../../delivery/kustomize.js';
import { scanCluster } from '../../scan/cluster.js';
import { exitCodeOf, type ScanReport } from '../../scan/findings.js';
import { findHelm } from '../../scan/helm.js';
import { LATEST_KNOWN_KUBE_VERSION, parseKubeVersion } from '../../scan/removals.js';
import { formatJson, formatSarif, formatText } from '../../scan/report.js';
import { scanPaths } from '../../scan/scan.js';
import { parseCommandArgs, UsageError } from '../usage.js';
import type { Command } from './command.js';
import { sluiceVersion } from './version.js';

const usage = `Usage: sluice scan [PATH...] [--target-version 1.29] [--kubeconfig FILE [--context NAME]] [-o text|json|sarif]

Finds Kubernetes API versions that are removed or deprecated at a target Kubernetes version, in:
  - directories of manifests (recursive; multi-document YAML, JSON, List items),
  - Kustomize directories (rendered with kubectl kustomize; findings point at the source file),
  - Helm charts (a directory with Chart.yaml: rendered with helm template --kube-version; when
    rendering fails or helm is missing, every apiVersion a template branch can produce is
    pattern-scanned and each finding says so; templates gated off by the default values too),
  - OLM bundles (manifests/ + metadata/annotations.yaml; a bundle capped by
    olm.maxOpenShiftVersion or com.redhat.openshift.versions below the OpenShift release of the
    target is reported as capped),
  - a live cluster (--kubeconfig): each object's managedFields and
    kubectl.kubernetes.io/last-applied-configuration name the version it was written with;
    the stored manifest of each deployed Helm release is judged too.
Only the top-level apiVersion/kind of each object is judged (never strings inside, e.g. a
ClusterServiceVersion's alm-examples).

Flags:
  --target-version V   Kubernetes version to judge against (default ${LATEST_KNOWN_KUBE_VERSION}, the newest
                       release the removal table was checked against)
  --kubeconfig FILE    also scan the live cluster of this kubeconfig
  --context NAME       kubeconfig context (default: the current context)
  -o, --output FORMAT  text (default), json, or sarif (SARIF 2.1.0, one rule per table row)

Helm is found via $SLUICE_HELM, then bin/helm of this package (make helm), then helm on PATH.

Exit codes:
  0  nothing deprecated or removed at the target
  3  deprecated APIs only
  4  APIs removed at the target (or not served there yet)
  2  usage error, or something could not be scanned (the result is incomplete; wins over 3 and 4)
`;

function merge(reports: readonly ScanReport[], targetVersion: string): ScanReport {
  return {
    targetVersion,
    findings: reports.flatMap((r) => r.findings),
    notices: reports.flatMap((r) => r.notices),
    scanned: reports.reduce((n, r) => n + r.scanned, 0),
  };
}

export const scanCommand: Command = {
  name: 'scan',
  summary: 'Find removed and deprecated Kubernetes APIs in manifests, charts, bundles or a cluster',
  failureExitCode: 2,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        'target-version': { type: 'string', default: LATEST_KNOWN_KUBE_VERSION },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        output: { type: 'string', short: 'o', default: 'text' },
      },
      usage,
      { positionals: { min: 0, max: Number.MAX_SAFE_INTEGER } },
    );
    const target = values['target-version'];
    try {
      parseKubeVersion(target);
    } catch (err) {
      throw new UsageError(`--target-version: ${(err as Error).message}`, usage);
    }
    const output = values.output;
    if (output !== 'text' && output !== 'json' && output !== 'sarif') {
      throw new UsageError(`-o must be text, json or sarif, got "${output}"`, usage);
    }
    if (positionals.length === 0 && !values.kubeconfig) {
      throw new UsageError('give at least one PATH or --kubeconfig', usage);
    }
    const reports: ScanReport[] = [];
    if (positionals.length > 0) {
      reports.push(
        await scanPaths(positionals, {
          targetVersion: target,
          helm: await findHelm(),
          kustomize: kubectlKustomize(),
        }),
      );
    }
    if (values.kubeconfig) {
      const kc = loadKubeConfig({ kubeconfig: values.kubeconfig, context: values.context });
      const name = kc.getCurrentContext() || 'cluster';
      try {
        reports.push(await scanCluster(clusterClient(name, kc), name, target));
      } catch (err) {
        reports.push({
          targetVersion: target,
          findings: [],
          notices: [
            { path: `cluster ${name}`, level: 'error', message: `cannot scan: ${(err as Error).message}` },
          ],
          scanned: 0,
        });
      }
    }
    const report = merge(reports, target);
    const text =
      output === 'json'
        ? formatJson(report)
        : output === 'sarif'
          ? formatSarif(report, sluiceVersion())
          : formatText(report);
    process.stdout.write(text);
    return exitCodeOf(report);
  },
};
