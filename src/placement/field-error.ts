/**
 * A spec field that is wrong, reported as the API server reports it (`field.Error` in
 * apimachinery): `message` is `<path>: <detail>`, e.g.
 * `spec.clusterSelector.matchExpressions[1].operator: Invalid value: "Equals": not a valid selector operator`,
 * so it can go straight into a condition message or an admission response. A spec error is
 * terminal: retrying the same spec cannot succeed.
 */
export class FieldError extends Error {
  override readonly name = 'FieldError';
  /** Path of the offending field, e.g. `spec.clusters[2].name`. */
  readonly field: string;
  /** The message without the path. */
  readonly detail: string;

  constructor(field: string, detail: string, opts?: { cause?: unknown }) {
    super(`${field}: ${detail}`, { cause: opts?.cause });
    this.field = field;
    this.detail = detail;
  }
}

/** apimachinery's `field.Invalid` wording. */
export function invalid(field: string, value: unknown, why: string): FieldError {
  return new FieldError(field, `Invalid value: ${JSON.stringify(value) ?? String(value)}: ${why}`);
}

/** apimachinery's `field.NotSupported` wording. */
export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldError {
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  return new FieldError(
    field,
    `Unsupported value: ${JSON.stringify(value) ?? String(value)}: supported values: ${list}`,
  );
}

/** apimachinery's `field.Required` wording. */
export function required(field: string, why = ''): FieldError {
  return new FieldError(field, why ? `Required value: ${why}` : 'Required value');
}
