/** One `sluice` sub-command. `run` returns the exit code; it throws `UsageError` for exit 2. */
export interface Command {
  readonly name: string;
  /** One line for `sluice --help`. */
  readonly summary: string;
  run(argv: string[]): Promise<number>;
  /**
   * The exit code for an error `run` throws (other than `UsageError`). Default 1; `diff` says 2,
   * because for it (as for `kubectl diff`) 1 means "differences found".
   */
  readonly failureExitCode?: number;
}
