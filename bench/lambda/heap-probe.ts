import { existsSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median } from '../stats.ts';

/**
 * Live memory of a runtime process, asked through profiler-preload.mjs: the function is started
 * with `environment()` and each `measure()` forces a full garbage collection there and reads
 * what is left (V8's used heap, memory outside it held by JS objects, the process's RSS).
 */
export interface HeapReading {
  usedHeapBytes: number;
  externalBytes: number;
  rssBytes: number;
}

const PRELOAD = fileURLToPath(new URL('./profiler-preload.mjs', import.meta.url));

export class HeapProbe {
  private readonly file: string;
  private count = 0;

  constructor(file: string) {
    this.file = file;
    for (let n = 1; existsSync(`${file}.${n}`); n++) rmSync(`${file}.${n}`);
  }

  environment(): Record<string, string> {
    return { NODE_OPTIONS: `--import=${PRELOAD}`, BENCH_HEAP_FILE: this.file };
  }

  async measure(pid: number): Promise<HeapReading> {
    const answer = `${this.file}.${++this.count}`;
    process.kill(pid, 'SIGUSR2');
    const until = Date.now() + 30_000;
    while (!existsSync(answer)) {
      if (Date.now() > until) throw new Error(`the runtime process did not answer the heap probe (${answer})`);
      await new Promise((done) => setTimeout(done, 5));
    }
    // Written in one call, but read only once it parses (the file may be seen before its bytes).
    for (;;) {
      try {
        return JSON.parse(readFileSync(answer, 'utf8')) as HeapReading;
      } catch {
        await new Promise((done) => setTimeout(done, 5));
      }
    }
  }

  /**
   * What one open stream holds: live memory after a forced full GC halfway through a stream,
   * minus the same just before it, medians of `samples` streams (one at a time). RSS does not
   * serve for this: one stream moves it by less than a page. Lambda gives each stream its own
   * environment, so the environment's RSS while it holds a stream is what a stream needs there.
   */
  async streamMemory(pid: number, stream: () => Promise<unknown>, halfwayMs: number, rssBytes: () => number, samples: number): Promise<{ heapBytes: number; externalBytes: number; environmentRssBytes: number }> {
    const heap: number[] = [];
    const external: number[] = [];
    const rss: number[] = [];
    for (let i = 0; i < samples; i++) {
      const idle = await this.measure(pid);
      const streamed = stream();
      await new Promise((resolve) => setTimeout(resolve, halfwayMs));
      const holding = await this.measure(pid);
      rss.push(rssBytes());
      await streamed;
      heap.push(holding.usedHeapBytes - idle.usedHeapBytes);
      external.push(holding.externalBytes - idle.externalBytes);
    }
    return { heapBytes: median(heap), externalBytes: median(external), environmentRssBytes: median(rss) };
  }
}
