/** A string that is not a Kubernetes resource quantity. */
export class InvalidQuantityError extends Error {
  override readonly name = 'InvalidQuantityError';
  readonly text: string;

  constructor(text: string) {
    super(`${JSON.stringify(text)} is not a Kubernetes quantity (e.g. 500m, 2, 64Gi, 1e3, 1.5Ki)`);
    this.text = text;
  }
}

const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const DECIMAL: Readonly<Record<string, number>> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};

// The grammar of resource.Quantity (k8s.io/apimachinery/pkg/api/resource/quantity.go):
// a signed decimal number, then a binary-SI suffix, a decimal exponent, or a decimal-SI suffix.
// The exponent is tried before the suffix so that `1E3` is 1000 while `1E` is one exa.
const QUANTITY_RE =
  /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?\d+)|(n|u|m|k|M|G|T|P|E))?$/;

/**
 * The value of a Kubernetes quantity in base units (cores for cpu, bytes for memory):
 * `500m` → 0.5, `2` → 2, `64Gi` → 68719476736, `1e3` → 1000, `1.5Ki` → 1536. A float — exact
 * enough to compare capacities, which is all placement needs. Throws
 * {@link InvalidQuantityError} for anything the API server would reject (`1K`, `1 Gi`, `Gi`, `1e`).
 */
export function parseQuantity(text: string): number {
  const m = QUANTITY_RE.exec(text);
  if (!m) throw new InvalidQuantityError(text);
  const [, number, binary, exponent, decimal] = m;
  const base = Number(number);
  if (binary !== undefined) return base * (BINARY[binary] as number);
  if (exponent !== undefined) return base * 10 ** Number(exponent);
  return base * (DECIMAL[decimal ?? ''] as number);
}
