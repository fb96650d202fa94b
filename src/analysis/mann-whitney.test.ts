import { mannWhitney, pnorm, qnorm, ranks } from './mann-whitney.js';

/*
 * Reference values are published outputs of R's wilcox.test (two-sample, two-sided unless
 * said), not values computed by this code:
 * [CV]  Cross Validated, "Question on confidence interval and Wilcoxon test":
 *       treated <- c(323, 421, 578, 300, 256, 640, 912, 370);
 *       untreated <- c(2388, 210, 380, 345, 1130, 260, 665, 1157);
 *       wilcox.test(treated, untreated, conf.int = TRUE) → W = 25, p-value = 0.5054,
 *       95 percent confidence interval: -807 198, difference in location -83.5 (exact: no ties).
 * [EM]  endmemo.com/r/wilcoxon.php: x <- c(1,5,9,24,56,21,3,7,21,4);
 *       y <- c(12,15,5,9,9,14,56,22,3,7,32,5); wilcox.test(x, y) → "Wilcoxon rank sum test with
 *       continuity correction", W = 51.5, p-value = 0.5966 (ties → normal approximation);
 *       y <- c(1233,4356,987,39999,1111,200000) → W = 0, p-value = 0.001364.
 * [HW]  R's own ?wilcox.test example, Hollander & Wolfe (1973) p. 69f: permeability
 *       x <- c(0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46);
 *       y <- c(1.15, 0.88, 0.90, 0.74, 1.21); wilcox.test(x, y, alternative = "g") →
 *       W = 35, p-value = 0.1272 (exact), so two-sided 2 × 0.1272.
 */

describe('mannWhitney against published R outputs', () => {
  it('GIVEN [CV] without ties WHEN tested with conf.int THEN exact W, p, interval and Hodges-Lehmann estimate match R', () => {
    const r = mannWhitney(
      [323, 421, 578, 300, 256, 640, 912, 370],
      [2388, 210, 380, 345, 1130, 260, 665, 1157],
    );
    expect(r.method).toBe('exact');
    expect(r.w).toBe(25);
    expect(r.pValue).toBeCloseTo(0.5054, 4);
    expect(r.lower).toBe(-807);
    expect(r.upper).toBe(198);
    expect(r.estimate).toBe(-83.5);
  });

  it('GIVEN [EM] samples with ties WHEN tested THEN the normal approximation with continuity correction gives R’s W and p', () => {
    const x = [1, 5, 9, 24, 56, 21, 3, 7, 21, 4];
    const r1 = mannWhitney(x, [12, 15, 5, 9, 9, 14, 56, 22, 3, 7, 32, 5]);
    expect(r1.method).toBe('normal');
    expect(r1.w).toBe(51.5);
    expect(r1.pValue).toBeCloseTo(0.5966, 4);
    expect(r1.lower).toBeLessThan(r1.estimate);
    expect(r1.upper).toBeGreaterThan(r1.estimate);
    expect(r1.lower).toBeLessThan(0);
    expect(r1.upper).toBeGreaterThan(0); // p > 0.05 ⇔ the 95% interval covers 0

    const r2 = mannWhitney(x, [1233, 4356, 987, 39999, 1111, 200000]);
    expect(r2.w).toBe(0);
    expect(r2.pValue).toBeCloseTo(0.001364, 6);
    expect(r2.upper).toBeLessThan(0); // p < 0.05 ⇔ the interval excludes 0
  });

  it('GIVEN [HW] WHEN tested two-sided THEN W = 35 and p = 2 × 0.1272', () => {
    const r = mannWhitney(
      [0.8, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46],
      [1.15, 0.88, 0.9, 0.74, 1.21],
    );
    expect(r.method).toBe('exact');
    expect(r.w).toBe(35);
    expect(r.pValue).toBeCloseTo(0.2544, 3);
    expect(r.lower).toBeLessThan(0);
    expect(r.upper).toBeGreaterThan(0);
  });

  it('GIVEN a higher confidence WHEN tested THEN the interval widens', () => {
    const x = [323, 421, 578, 300, 256, 640, 912, 370];
    const y = [2388, 210, 380, 345, 1130, 260, 665, 1157];
    const r95 = mannWhitney(x, y, 0.95);
    const r99 = mannWhitney(x, y, 0.99);
    expect(r99.lower).toBeLessThanOrEqual(r95.lower);
    expect(r99.upper).toBeGreaterThanOrEqual(r95.upper);
  });

  it('GIVEN 60 samples per side shifted by 10 WHEN tested THEN the normal path brackets the shift', () => {
    const y = Array.from({ length: 60 }, (_, i) => 100 + ((i * 37) % 50));
    const x = y.map((v) => v + 10);
    const r = mannWhitney(x, y);
    expect(r.method).toBe('normal');
    expect(r.estimate).toBeCloseTo(10, 2);
    expect(r.lower).toBeGreaterThan(0);
  });

  it('GIVEN an empty side or all values tied WHEN tested THEN a RangeError says why', () => {
    expect(() => mannWhitney([], [1])).toThrow(RangeError);
    expect(() => mannWhitney([1, 1, 1], [1, 1])).toThrow(/tied/);
  });
});

describe('normal distribution helpers', () => {
  it.each([
    [1.96, 0.9750021048517795],
    [-3, 0.0013498980316301],
    [0, 0.5],
  ])('GIVEN z=%p THEN pnorm matches R’s pnorm', (z, p) => {
    expect(pnorm(z)).toBeCloseTo(p, 12);
  });
  it('GIVEN p=0.975 THEN qnorm is R’s 1.959964', () => {
    expect(qnorm(0.975)).toBeCloseTo(1.959963984540054, 9);
    expect(qnorm(0.001)).toBeCloseTo(-3.090232306167813, 9);
  });
  it('GIVEN ties THEN ranks are averaged', () => {
    expect(ranks([10, 20, 10, 30])).toEqual([1.5, 3, 1.5, 4]);
  });
});

describe('mannWhitney with constant samples on each side', () => {
  it('GIVEN canary all 0.8 and primary all 1.0 (a steady success rate) WHEN tested THEN the interval collapses onto the shift −0.2', () => {
    const r = mannWhitney([0.8, 0.8, 0.8, 0.8, 0.8], [1, 1, 1, 1, 1, 1]);
    expect(r.method).toBe('normal');
    expect(r.estimate).toBeCloseTo(-0.2, 4);
    expect(r.lower).toBeCloseTo(-0.2, 4);
    expect(r.upper).toBeCloseTo(-0.2, 4);
  });
});
