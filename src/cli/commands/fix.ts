import { parseKubeVersion } from '../../scan/removals.js';
import { fixExitCode, formatFixReport, FixExit, runFix } from '../../scan/fix/fixer.js';
import { parseCommandArgs, UsageError } from '../usage.js';
import type { Command } from './command.js';

const usage = `Usage: sluice fix PATH... --target-version X [--write]

Rewrites manifests whose apiVersion is removed at (or deprecated by) Kubernetes X into the
replacement, and prints a FIXED or FLAG line per object (file:line) and a unified diff per
file. Files are changed only with --write. Other documents of a file, comments and key order
are kept.

Mechanical rewrites: CustomResourceDefinition v1beta1 → v1 (versions list, schema per version,
JSONPath → jsonPath, scope, conversion block, structural schema repairs); Ingress →
networking.k8s.io/v1 (backend shape, pathType: ImplementationSpecific); webhook configurations
v1beta1 → v1 (the old defaults written out); CronJob, PodDisruptionBudget, HPA v2beta1/v2beta2
→ v2; workloads → apps/v1 (selector from template labels); RBAC and the other renames.

FLAG (left as it is, with the reason) where no mapping is safe: a CRD's preserveUnknownFields
(true, or absent: the v1beta1 default), schemas that cannot be made structural mechanically,
a webhook's sideEffects Unknown/Some, an empty PDB selector, volatile template labels, an
apiVersion in a Helm template or values.yaml, a removed kind with no replacement.
An OLM bundle (metadata/annotations.yaml + manifests/) is shown but never written in place:
--write refuses (writing nothing at all) unless --bundle-out names a new directory for a copy.

Exit status: 0 nothing to fix; 1 fixes found (dry run) or written, nothing flagged; 3 FLAGs
remain; 2 an error (bad flag, unreadable path or YAML, --write refused for an OLM bundle).

Flags:
  --target-version X   the Kubernetes version to fix for, e.g. 1.29 (required)
  --write              write the fixed files (default: only print)
  --bundle-out DIR     with --write and one OLM bundle: write a fixed copy of the bundle to DIR
                       (a new bundle version) instead of refusing
`;

export const fixCommand: Command = {
  name: 'fix',
  summary: 'Rewrite manifests that use removed or deprecated API versions',
  failureExitCode: FixExit.Error,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(
      argv,
      {
        'target-version': { type: 'string' },
        write: { type: 'boolean', default: false },
        'bundle-out': { type: 'string' },
      },
      usage,
      { positionals: { min: 1, max: Number.MAX_SAFE_INTEGER } },
    );
    const target = values['target-version'];
    if (!target) throw new UsageError('--target-version is required', usage);
    try {
      parseKubeVersion(target);
    } catch (err) {
      throw new UsageError(`--target-version: ${(err as Error).message}`, usage);
    }
    const bundleOut = values['bundle-out'];
    if (bundleOut && !values.write) throw new UsageError('--bundle-out needs --write', usage);
    const report = await runFix(positionals, target, values.write === true, bundleOut ? { bundleOut } : {});
    process.stdout.write(formatFixReport(report));
    return fixExitCode(report);
  },
};
