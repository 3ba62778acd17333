/**
 * Requests-per-minute limits count in fixed UTC minutes (`minutePeriod`), so a test whose
 * requests straddle a minute's end sees the count start again. A test that needs its requests in
 * one window waits here first, when fewer than `seconds` of the current minute are left.
 */
export async function withinOneMinute(seconds: number): Promise<void> {
  const left = 60 - new Date().getUTCSeconds() - new Date().getUTCMilliseconds() / 1000;
  if (left < seconds) await new Promise((resolve) => setTimeout(resolve, left * 1000 + 100));
}
