import type { Command } from './command.js';
import { controllerCommand } from './controller.js';
import { installCrdsCommand } from './install-crds.js';
import { versionCommand } from './version.js';
import { getCommand } from './get.js';
import { reconcileCommand } from './reconcile.js';
import { diffCommand } from './diff.js';
import { operatorCommands } from './canary.js';
import { statusCommand } from './status.js';
import { scanCommand } from './scan.js';
import { fixCommand } from './fix.js';
import { migrateStorageCommand } from './migrate-storage.js';

/** Every `sluice` sub-command, in the order `sluice --help` lists them. */
export const commands: readonly Command[] = [
  controllerCommand,
  installCrdsCommand,
  migrateStorageCommand,
  versionCommand,
  getCommand,
  reconcileCommand,
  diffCommand,
  statusCommand,
  ...operatorCommands,
  scanCommand,
  fixCommand,
];

export function rootUsage(): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `sluice — GitOps progressive delivery for Kubernetes

Usage: sluice <command> [flags]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run "sluice <command> --help" for a command's flags.
`;
}
