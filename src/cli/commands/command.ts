/** One `sluice` sub-command. `run` returns the exit code; it throws `UsageError` for exit 2. */
export interface Command {
  readonly name: string;
  /** One line for `sluice --help`. */
  readonly summary: string;
  run(argv: string[]): Promise<number>;
}
