import { bucketStart, csvField, explorerCsv, type Explorer } from '../../../lambda/admin/api/usage.ts';

describe('the explorer as CSV', () => {
  test.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['line\nbreak', '"line\nbreak"'],
    // A key name a spreadsheet would run as a formula is written as text.
    ['=HYPERLINK("http://evil.example")', `"'=HYPERLINK(""http://evil.example"")"`],
    ['+1', "'+1"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
  ])('%j is written %s', (text, field) => {
    expect(csvField(text)).toBe(field);
  });

  test('buckets start at their UTC hour, day and month', () => {
    expect(new Date(bucketStart('2026-11-26T14')).toISOString()).toBe('2026-11-26T14:00:00.000Z');
    expect(new Date(bucketStart('2026-11-26')).toISOString()).toBe('2026-11-26T00:00:00.000Z');
    expect(new Date(bucketStart('2026-11')).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  test('dollars to the micro-dollar, other units as counts, and the other values as one column', () => {
    const explorer: Explorer = {
      metric: 'cost',
      unit: 'microUsd',
      by: 'key',
      granularity: 'D',
      from: '2026-11-25T00:00:00.000Z',
      to: '2026-11-26T23:00:00.000Z',
      buckets: ['2026-11-25', '2026-11-26'],
      bucketStarts: [bucketStart('2026-11-25'), bucketStart('2026-11-26')],
      series: [{ value: 'key_1', label: '<b>ci</b>', points: [1_234_567, 1], total: 1_234_568 }],
      other: { count: 3, points: [0, 10], total: 10, label: 'Other models' },
      total: { points: [1_234_567, 11], total: 1_234_578, label: 'All requests' },
      asOf: null,
      live: true,
    };
    expect(explorerCsv(explorer)).toBe(
      ['bucket_start_utc,<b>ci</b> (USD),Other models (USD),All requests (USD)', '2026-11-25T00:00:00.000Z,1.234567,0.000000,1.234567', '2026-11-26T00:00:00.000Z,0.000001,0.000010,0.000011', ''].join('\r\n'),
    );
  });
});
