import type { Family } from '../../routes.ts';
import { LightResponse } from '../light-response.ts';
import { messagesEvents, messagesJson } from './messages.ts';
import { responsesEvents, responsesJson } from './responses.ts';

const encoder = new TextEncoder();

/**
 * The built-in upstream: answers in the client's own format (so every route through it is a
 * passthrough), deterministically, with no network. It makes `npm start` useful offline and
 * gives the benchmark an upstream that costs nothing. `delayMs` paces streamed events, and a
 * paced stream says its pace in `x-gateway-simulator-event-gap-ms`: `npm run smoke` compares the
 * gaps it sees through a deployed gateway with it (bin/local/smoke-checks.ts).
 */
export const SIMULATOR_GAP_HEADER = 'x-gateway-simulator-event-gap-ms';

export function simulate(family: Family, body: Record<string, unknown>, delayMs: number, signal: AbortSignal): Response {
  const stream = body.stream === true;
  if (!stream) {
    const json = family === 'messages' ? messagesJson(body) : responsesJson(body);
    return new LightResponse(json, { status: 200, headers: { 'content-type': 'application/json' } }).asResponse();
  }
  const events = family === 'messages' ? messagesEvents(body) : responsesEvents(body);
  return new LightResponse(paced(events, delayMs, signal), {
    status: 200,
    headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', ...(delayMs > 0 ? { [SIMULATOR_GAP_HEADER]: String(delayMs) } : {}) },
  }).asResponse();
}

function paced(events: string[], delayMs: number, signal: AbortSignal): ReadableStream<Uint8Array> {
  if (delayMs === 0) {
    return new ReadableStream({
      start(controller) {
        controller.enqueue(encoder.encode(events.join('')));
        controller.close();
      },
    });
  }
  let next = 0;
  return new ReadableStream({
    async pull(controller) {
      if (next > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      if (signal.aborted) return controller.error(signal.reason);
      controller.enqueue(encoder.encode(events[next++] as string));
      if (next === events.length) controller.close();
    },
  });
}
