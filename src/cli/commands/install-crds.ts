import { installCrds } from '../../api/install.js';
import { parseCommandArgs } from '../usage.js';
import type { Command } from './command.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice install-crds [flags]

Server-side applies Sluice's CustomResourceDefinitions to the cluster and waits until
each is Established.

Flags:
${kubeFlagsUsage}`;

export const installCrdsCommand: Command = {
  name: 'install-crds',
  summary: "Install or upgrade Sluice's CRDs on a cluster",
  async run(argv) {
    const { values } = parseCommandArgs(argv, { ...kubeFlags }, usage);
    const names = await installCrds(hubClient(values));
    for (const n of names ?? []) process.stdout.write(`customresourcedefinition/${n} established\n`);
    return 0;
  },
};
