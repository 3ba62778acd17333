import { writeFileSync } from 'node:fs';

/**
 * Loaded into the runtime process with `NODE_OPTIONS=--import=<this file>` (bench/lambda/profile.ts,
 * heap-probe.ts). The runtime process never exits on its own (the emulated platform kills it, as
 * Lambda does), so `--cpu-prof` (written at a normal exit) cannot be used and nothing can be asked
 * of it but by a signal. Each SIGUSR2:
 * - with BENCH_PROFILE_FILE: the first starts V8's sampling profiler, the second stops it and
 *   writes the profile to that file, then `<file>.done`;
 * - with BENCH_HEAP_FILE: a full garbage collection (through the inspector), then the live heap
 *   and the process's memory written as JSON to `<file>.<n>` (n counts from 1).
 * Nothing else is touched: the runtime client and the handler run unchanged, and the inspector
 * and v8 modules are loaded at the first signal (the process's memory before it is its own).
 * Plain JavaScript: a TypeScript preload would make Node load its type stripper (amaro, WASM)
 * into the runtime process, about 30 MiB of RSS the bench would then report as the gateway's.
 */
const profileFile = process.env.BENCH_PROFILE_FILE;
const heapFile = process.env.BENCH_HEAP_FILE;
const intervalUs = Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 100);
/** @type {import('node:inspector/promises').Session | undefined} */
let session;

if (profileFile) {
  process.on('SIGUSR2', () => {
    if (session === undefined) {
      session = connectedSession();
      void (async () => {
        await session?.post('Profiler.enable');
        await session?.post('Profiler.setSamplingInterval', { interval: intervalUs });
        await session?.post('Profiler.start');
        writeFileSync(`${profileFile}.started`, '');
      })();
      return;
    }
    const running = session;
    void (async () => {
      const { profile } = await running.post('Profiler.stop');
      writeFileSync(profileFile, JSON.stringify(profile));
      writeFileSync(`${profileFile}.done`, '');
    })();
  });
} else if (heapFile) {
  let count = 0;
  process.on('SIGUSR2', () => {
    const n = ++count;
    session ??= connectedSession();
    const connected = session;
    void (async () => {
      await connected.post('HeapProfiler.collectGarbage');
      const memory = process.memoryUsage();
      const heap = { usedHeapBytes: process.getBuiltinModule('node:v8').getHeapStatistics().used_heap_size, externalBytes: memory.external, rssBytes: memory.rss };
      writeFileSync(`${heapFile}.${n}`, JSON.stringify(heap));
    })();
  });
}

/** @returns {import('node:inspector/promises').Session} */
function connectedSession() {
  const { Session } = process.getBuiltinModule('node:inspector/promises');
  const session = new Session();
  session.connect();
  return session;
}
