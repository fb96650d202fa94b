import { formatTable, humanAge, type Column } from './table.js';

interface R {
  name: string;
  ready: string;
  message: string;
}
const columns: Column<R>[] = [
  { header: 'name', value: (r) => r.name },
  { header: 'Ready', value: (r) => r.ready },
  { header: 'MESSAGE', value: (r) => r.message },
];

describe('formatTable', () => {
  it('GIVEN rows THEN upper-case headers, columns padded to the widest cell, 3 spaces apart, no trailing blanks', () => {
    expect(
      formatTable(columns, [
        { name: 'web', ready: 'True', message: 'Applied main@sha1:4f1c' },
        { name: 'payments-api', ready: 'False', message: '' },
      ]),
    ).toBe(
      [
        'NAME           READY   MESSAGE',
        'web            True    Applied main@sha1:4f1c',
        'payments-api   False',
        '',
      ].join('\n'),
    );
  });

  it('GIVEN no rows THEN the header line only', () => {
    expect(formatTable(columns, [])).toBe('NAME   READY   MESSAGE\n');
  });

  it('GIVEN a multi-line message THEN it is printed on one line', () => {
    expect(formatTable(columns, [{ name: 'a', ready: 'False', message: 'first\n  second\r\nthird' }])).toBe(
      'NAME   READY   MESSAGE\na      False   first second third\n',
    );
  });

  it('GIVEN non-ASCII text THEN widths count characters, not UTF-16 units', () => {
    const out = formatTable(columns, [{ name: 'é🙂', ready: 'x', message: 'm' }]);
    expect(out.split('\n')[1]).toBe('é🙂     x       m');
  });
});

describe('humanAge (kubectl)', () => {
  it.each([
    [-5_000, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [45_000, '45s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [330_000, '5m30s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3_600_000, '3h'],
    [(2 * 60 + 15) * 60_000 + 3 * 3_600_000, '5h15m'],
    [30 * 3_600_000, '30h'],
    [(3 * 24 + 4) * 3_600_000, '3d4h'],
    [10 * 24 * 3_600_000, '10d'],
    [(3 * 365 + 30) * 24 * 3_600_000, '3y30d'],
    [9 * 365 * 24 * 3_600_000, '9y'],
  ])('GIVEN %d ms THEN %s', (ms, text) => {
    expect(humanAge(ms)).toBe(text);
  });
});
