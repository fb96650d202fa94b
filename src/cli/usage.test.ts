import { parseDuration } from '../api/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['0s', 0],
  ])('GIVEN %s THEN %d ms', (text, ms) => expect(parseDuration(text)).toBe(ms));

  it.each(['', '5', '5x', '-1s', '1d', 's', '1h 30m'])('GIVEN %j THEN undefined', (text) =>
    expect(parseDuration(text)).toBeUndefined(),
  );
});
