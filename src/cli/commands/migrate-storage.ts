import { kindInfo } from '../../api/crds.js';
import { migrateStorage } from '../../api/storage-migration.js';
import { parseCommandArgs, UsageError } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice migrate-storage [flags]

Rewrites every CanaryRelease through the apiserver so that it is stored in the CRD's storage
version (v1), then trims the CRD's status.storedVersions to that version. Objects stored as
v1alpha1 are read through the conversion webhook, so the controller's webhooks must be
serving. Safe to run again; does nothing when storedVersions is already [v1].

Flags:
${kubeFlagsUsage}  --force              rewrite every object even when storedVersions is already trimmed
  -o, --output FORMAT  text or json (default text)
`;

export const migrateStorageCommand: Command = {
  name: 'migrate-storage',
  summary: 'Rewrite CanaryReleases in the storage version and trim storedVersions',
  async run(argv) {
    const { values } = parseCommandArgs(
      argv,
      { ...kubeFlags, force: { type: 'boolean' }, output: { type: 'string', short: 'o', default: 'text' } },
      usage,
    );
    if (values.output !== 'text' && values.output !== 'json')
      throw new UsageError(`-o must be text or json, got "${values.output}"`, usage);
    const result = await migrateStorage(hubClient(values), kindInfo('CanaryRelease').crdName, {
      force: values.force ?? false,
    });
    if (values.output === 'json') process.stdout.write(JSON.stringify(result) + '\n');
    else
      process.stdout.write(
        `${result.crd}: storage version ${result.storageVersion}; rewrote ${result.rewritten} object(s)` +
          (result.skipped ? `, ${result.skipped} changed meanwhile` : '') +
          `; storedVersions [${result.storedVersionsBefore.join(', ')}] -> [${result.storedVersionsAfter.join(', ')}]\n`,
      );
    return 0;
  },
};
