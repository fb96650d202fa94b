import { HelpRequested, UsageError } from './usage.js';
import { commands, rootUsage } from './commands/index.js';

/**
 * Runs one `sluice` invocation and returns its exit code: 0 success, 1 runtime failure,
 * 2 usage error (unknown command or flag, bad flag value) — kubectl's and flux's conventions.
 * A command may use another code for runtime failures (`diff`: 2, as `kubectl diff`).
 */
export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(rootUsage());
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`sluice: unknown command "${name}"\n\n${rootUsage()}`);
    return 2;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(err.usage);
      return 0;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`sluice ${name}: ${err.message}\n\n${err.usage}`);
      return 2;
    }
    process.stderr.write(`sluice ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return command.failureExitCode ?? 1;
  }
}
