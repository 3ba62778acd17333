import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

/**
 * Loaded into the runtime process with `NODE_OPTIONS=--import=<this file>` (bench/lambda/profile.ts).
 * `--cpu-prof` cannot be used there: the runtime process never exits on its own (the emulated
 * platform kills it, as Lambda does), and a profile is only written at a normal exit. Instead the
 * first SIGUSR2 starts V8's sampling profiler and the second stops it and writes the profile to
 * BENCH_PROFILE_FILE, then `<file>.done`. Nothing else is touched: the runtime client and the
 * handler run unchanged.
 */
const file = process.env.BENCH_PROFILE_FILE;
const intervalUs = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100);
let session: Session | undefined;

if (file) {
  process.on('SIGUSR2', () => {
    if (session === undefined) {
      session = new Session();
      session.connect();
      void (async () => {
        await session?.post('Profiler.enable');
        await session?.post('Profiler.setSamplingInterval', { interval: intervalUs });
        await session?.post('Profiler.start');
        writeFileSync(`${file}.started`, '');
      })();
      return;
    }
    const running = session;
    void (async () => {
      const { profile } = await running.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      writeFileSync(`${file}.done`, '');
    })();
  });
}
