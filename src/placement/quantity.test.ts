import { InvalidQuantityError, parseQuantity } from './quantity.js';

describe('parseQuantity', () => {
  it.each<[string, number]>([
    ['500m', 0.5],
    ['2', 2],
    ['7500m', 7.5],
    ['64Gi', 64 * 2 ** 30],
    ['1.5Ki', 1536],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1.5e-3', 0.0015],
    ['1E', 1e18],
    ['1k', 1000],
    ['3M', 3e6],
    ['100n', 1e-7],
    ['250u', 2.5e-4],
    ['.5', 0.5],
    ['5.', 5],
    ['+4', 4],
    ['-1Mi', -(2 ** 20)],
    ['0', 0],
    ['31Gi', 31 * 2 ** 30],
  ])('GIVEN %j WHEN parsed THEN %d', (text, value) => {
    expect(parseQuantity(text)).toBeCloseTo(value, 12);
  });

  it.each(['', 'Gi', '1K', '1 Gi', '1e', '1.2.3', '1Gb', 'abc', ' 1', '1i', '1e3m', '0x10', '.'])(
    'GIVEN %j WHEN parsed THEN it throws InvalidQuantityError',
    (text) => {
      expect(() => parseQuantity(text)).toThrow(InvalidQuantityError);
      expect(() => parseQuantity(text)).toThrow(
        `${JSON.stringify(text)} is not a Kubernetes quantity (e.g. 500m, 2, 64Gi, 1e3, 1.5Ki)`,
      );
    },
  );
});
