import { readFileSync } from 'node:fs';
import { parseCommandArgs, UsageError } from '../usage.js';
import type { Command } from './command.js';
import { DEFAULT_FEATURE_GATES } from '../../features.js';
import { formatTable } from '../table.js';

const usage = `Usage: sluice version [-o text|json] [--features]

Prints the version of sluice and of Node.js it runs on. With --features, lists the feature
gates (name, default, stage) that "sluice controller --feature-gates" accepts.
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
      { output: { type: 'string', short: 'o', default: 'text' }, features: { type: 'boolean' } },
      usage,
    );
    if (values.output !== 'json' && values.output !== 'text')
      throw new UsageError(`-o must be text or json, got "${values.output}"`, usage);
    if (values.features) {
      const gates = DEFAULT_FEATURE_GATES.list().map(({ name, default: def, stage, description }) => ({
        name,
        default: def,
        stage,
        description,
      }));
      if (values.output === 'json') process.stdout.write(JSON.stringify(gates) + '\n');
      else
        process.stdout.write(
          formatTable(
            [
              { header: 'name', value: (g) => g.name },
              { header: 'default', value: (g) => String(g.default) },
              { header: 'stage', value: (g) => g.stage },
              { header: 'description', value: (g) => g.description },
            ],
            gates,
          ),
        );
      return 0;
    }
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
