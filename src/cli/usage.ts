import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseDuration } from '../api/duration.js';

/** A mistake in how the command was called: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  constructor(
    message: string,
    readonly usage: string,
  ) {
    super(message);
  }
}

/** `--help` was given: `runCli` prints `usage` to stdout and exits 0. */
export class HelpRequested {
  constructor(readonly usage: string) {}
}

export type OptionSpec = NonNullable<ParseArgsConfig['options']>;

/**
 * Parses `argv` strictly against `options`: an unknown flag, a missing value or a stray
 * positional argument is a `UsageError` naming it. `--help` (`-h`) is accepted everywhere
 * and throws `HelpRequested`, so commands never handle it themselves.
 */
export function parseCommandArgs<O extends OptionSpec>(
  argv: string[],
  options: O,
  usage: string,
  opts: { positionals?: { min: number; max: number } } = {},
) {
  try {
    const parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } } as O & {
        help: { type: 'boolean'; short: 'h' };
      },
      strict: true,
      allowPositionals: true,
    });
    if ((parsed.values as { help?: boolean }).help) throw new HelpRequested(usage);
    const { min, max } = opts.positionals ?? { min: 0, max: 0 };
    if (parsed.positionals.length > max) {
      throw new UsageError(`unexpected argument "${parsed.positionals[max]}"`, usage);
    }
    if (parsed.positionals.length < min) {
      throw new UsageError(`missing argument`, usage);
    }
    return parsed;
  } catch (err) {
    if (err instanceof UsageError || err instanceof HelpRequested) throw err;
    // node:util reports e.g. "Unknown option '--x'"; keep its words, drop its advice.
    // Not `instanceof Error`: node:util's errors may come from another realm (jest's vm).
    const text =
      typeof (err as { message?: unknown })?.message === 'string' ? (err as Error).message : String(err);
    const message = text.split('. ')[0]!;
    throw new UsageError(message, usage);
  }
}

/** Parses a duration flag like `30s`, `5m`, `1h30m`, `500ms` into milliseconds. */
export function parseDurationFlag(flag: string, value: string, usage: string): number {
  const ms = parseDuration(value);
  if (ms === undefined) {
    throw new UsageError(`--${flag} must be a duration such as 30s, 5m or 1h, got "${value}"`, usage);
  }
  return ms;
}
