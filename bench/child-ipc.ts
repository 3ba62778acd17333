/**
 * The IPC protocol between the benchmark runner and its child processes (upstream stub and
 * gateway). Each child answers `sample` with its own CPU time and memory, so the runner can
 * charge work to exactly one process; samples cost the child one small message each.
 */
export interface ProcessSample {
  /** process.cpuUsage(): user + system time of every thread of the process, in microseconds. */
  cpuUs: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** Wall clock of the child when it took the sample (performance.now() of the child). */
  at: number;
}

export type ParentMessage =
  | { type: 'sample'; id: number; gc?: boolean }
  | { type: 'profile-start'; id: number }
  | { type: 'profile-stop'; id: number; path: string }
  | { type: 'usage'; id: number };

export type ChildMessage =
  | { type: 'ready'; url: string; key?: string; bundle?: string }
  | { type: 'sample'; id: number; sample: ProcessSample }
  | { type: 'done'; id: number; error?: string }
  | { type: 'usage'; id: number; requests: number };

export function takeSample(): ProcessSample {
  const cpu = process.cpuUsage();
  const memory = process.memoryUsage();
  return { cpuUs: cpu.user + cpu.system, rssBytes: memory.rss, heapUsedBytes: memory.heapUsed, at: performance.now() };
}

/**
 * Answers the runner's messages in a child. `extra` handles what only some children do
 * (profiling); the child exits when the runner goes away, so no process outlives a run.
 */
export function serveParent(extra: (message: ParentMessage) => Promise<void | ChildMessage> | undefined = () => undefined): void {
  const send = (message: ChildMessage) => process.send?.(message);
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'sample') {
      // With gc: a full collection first, so the heap figure is live memory, not garbage.
      if (message.gc) (globalThis as { gc?: () => void }).gc?.();
      send({ type: 'sample', id: message.id, sample: takeSample() });
      return;
    }
    const work = extra(message);
    if (work === undefined) return send({ type: 'done', id: message.id, error: `unsupported message ${message.type}` });
    work.then(
      (answer) => send(answer ?? { type: 'done', id: message.id }),
      (error: unknown) => send({ type: 'done', id: message.id, error: String(error) }),
    );
  });
  process.on('disconnect', () => process.exit(0));
}
