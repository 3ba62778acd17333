/**
 * Does the path to a deployed gateway deliver a stream as it is written? Practitioners report
 * Lambda Function URLs holding back small writes until more data follows (the AWS Lambda Node.js
 * runtime interface client issues #94 and #102), which turns a model's token stream into bursts.
 * Only a real deployment can show it, so `npm run smoke` asks the gateway's built-in simulator
 * for a stream paced at a known rate (its `x-gateway-simulator-event-gap-ms`, one small write per
 * event) and compares the gaps between the events it receives with that pace.
 */
export const PACED_GAP_HEADER = 'x-gateway-simulator-event-gap-ms';

/** The model the default routing (cdk.json) sends to a simulator pacing one event per 100 ms. */
export const DEFAULT_PACED_MODEL = 'gateway-smoke-paced';

export interface Delivery {
  /** The upstream's pace: one event every `gapMs`. */
  gapMs: number;
  /** Request sent -> response head, and -> each complete event (ms). */
  headersMs: number;
  eventsMs: number[];
  /** Longest padding comment line seen (GATEWAY_STREAM_PAD_BYTES), 0 when the writes were not padded. */
  paddingBytes: number;
}

export interface DeliveryVerdict {
  /** True when events arrived at the pace they were written. */
  asWritten: boolean;
  summary: string;
}

/**
 * A gap under half the pace means the event waited for the one before it and left with it: the
 * path held a small write back. A few such gaps are jitter (a busy client, a GC pause); more
 * than one in ten is a pattern, and so is a first event that waited much longer than the head.
 */
export function judgeDelivery(delivery: Delivery): DeliveryVerdict {
  const { gapMs, headersMs, eventsMs } = delivery;
  const gaps = eventsMs.slice(1).map((at, i) => at - (eventsMs[i] as number));
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
  const longest = sorted.at(-1) ?? 0;
  const bunched = gaps.filter((gap) => gap < gapMs / 2).length;
  const firstEventMs = eventsMs[0] ?? Number.NaN;
  const firstHeld = firstEventMs - headersMs > 2 * gapMs;
  const asWritten = gaps.length > 0 && bunched <= Math.max(1, Math.floor(gaps.length / 10)) && !firstHeld;
  const figures =
    `head after ${Math.round(headersMs)} ms, first event after ${Math.round(firstEventMs)} ms; ${eventsMs.length} events, ` +
    `gaps median ${Math.round(median)} ms, longest ${Math.round(longest)} ms (the simulator wrote one every ${gapMs} ms); ` +
    `${bunched} of ${gaps.length} arrived with the one before` +
    (delivery.paddingBytes > 0 ? `; writes padded (SSE comment lines of up to ${delivery.paddingBytes} bytes, GATEWAY_STREAM_PAD_BYTES)` : '');
  if (asWritten) return { asWritten, summary: `delivered as written: ${figures}` };
  const why = firstHeld ? 'the first event waited for later ones' : `${bunched} events were held back and left together with a later one`;
  return {
    asWritten,
    summary: `the path HOLDS BACK small writes (${why}): ${figures}. Set tuning.streamPadBytes (docs/deployment.md, "Streaming delivery"), deploy, and run this again`,
  };
}

/**
 * Reads an SSE body to its end, timestamping each complete event (its blank line). Comment-only
 * blocks (padding) are not events; their size is noted.
 */
export async function readDelivery(body: ReadableStream<Uint8Array>, startedAt: number): Promise<{ eventsMs: number[]; text: string; paddingBytes: number }> {
  const decoder = new TextDecoder();
  const eventsMs: number[] = [];
  let text = '';
  let pending = '';
  let paddingBytes = 0;
  for await (const chunk of body) {
    const at = performance.now() - startedAt;
    const piece = decoder.decode(chunk, { stream: true });
    text += piece;
    pending += piece;
    for (let end = pending.indexOf('\n\n'); end !== -1; end = pending.indexOf('\n\n')) {
      const block = pending.slice(0, end);
      pending = pending.slice(end + 2);
      const lines = block.split('\n').filter((line) => line !== '');
      const comments = lines.filter((line) => line.startsWith(':'));
      for (const comment of comments) paddingBytes = Math.max(paddingBytes, comment.length);
      if (lines.length > comments.length) eventsMs.push(at);
    }
  }
  return { eventsMs, text: text + decoder.decode(), paddingBytes };
}
