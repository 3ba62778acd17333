/**
 * One abort controller per upstream call, with the request's deadline as a plain timer: it is
 * aborted when the client goes away, when the upstream sends no headers in time, or when the
 * deadline passes. (`AbortSignal.any` over `AbortSignal.timeout` did the same at 12-14 us per
 * request, docs/performance.md.) `release` clears the timer once the response has ended.
 */
export interface RequestAbort {
  readonly signal: AbortSignal;
  abort(reason: unknown): void;
  release(): void;
}

export function requestAbort(deadline: number): RequestAbort {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The request deadline was reached.', 'TimeoutError')), Math.max(1, deadline - Date.now()));
  timer.unref();
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    release: () => clearTimeout(timer),
  };
}
