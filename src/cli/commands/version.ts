import { readFileSync } from 'node:fs';
import { parseCommandArgs, UsageError } from '../usage.js';
import type { Command } from './command.js';

const usage = `Usage: sluice version [-o text|json]

Prints the version of sluice and of Node.js it runs on.
`;

/** The package version, read from the package.json that ships next to dist/. */
export function sluiceVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return pkg.version;
}

export const versionCommand: Command = {
  name: 'version',
  summary: 'Print the version',
  async run(argv) {
    const { values } = parseCommandArgs(
      argv,
      { output: { type: 'string', short: 'o', default: 'text' } },
      usage,
    );
    const info = {
      sluice: sluiceVersion(),
      node: process.version,
      platform: `${process.platform}/${process.arch}`,
    };
    if (values.output === 'json') process.stdout.write(JSON.stringify(info) + '\n');
    else if (values.output === 'text')
      process.stdout.write(`sluice ${info.sluice} (node ${info.node}, ${info.platform})\n`);
    else throw new UsageError(`-o must be text or json, got "${values.output}"`, usage);
    return 0;
  },
};
