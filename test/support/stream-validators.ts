/**
 * What the real clients require of a stream (docs/wire-formats.md §1.4 and §2.4),
 * checked event by event. They throw with the first violation.
 */
type Json = Record<string, any>;

export function parseSse(text: string): { event: string | undefined; data: Json }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() && !block.startsWith(':'))
    .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null') }));
}

/** Messages: event lines, one message_start first, blocks opened and closed in order, message_delta then message_stop last. */
export function validateMessagesStream(text: string): Json[] {
  const events = parseSse(text);
  let open: number | undefined;
  let next = 0;
  events.forEach(({ event, data }, position) => {
    if (event !== data.type) throw new Error(`event line "${event}" does not match type "${data.type}"`);
    if ((position === 0) !== (data.type === 'message_start')) throw new Error('message_start must come first, once');
    if (data.type === 'content_block_start') {
      if (open !== undefined) throw new Error('a block was opened before the previous one was closed');
      if (data.index !== next) throw new Error(`block index ${data.index}, expected ${next}`);
      open = next++;
    } else if (data.type === 'content_block_delta' && data.index !== open) throw new Error('delta for a block that is not open');
    else if (data.type === 'content_block_stop') {
      if (data.index !== open) throw new Error('stop for a block that is not open');
      open = undefined;
    }
  });
  const types = events.map((event) => event.data.type);
  if (types.at(-1) !== 'error') {
    if (types.at(-1) !== 'message_stop' || types.at(-2) !== 'message_delta') throw new Error(`stream must end with message_delta, message_stop; ended ${types.slice(-2)}`);
    if (open !== undefined) throw new Error('a block was never closed');
  }
  return events.map((event) => event.data);
}

/** Responses: dense sequence numbers from 0, dense output indexes, unique ids, every item done, a terminal event with all items and usage. */
export function validateResponsesStream(text: string): Json[] {
  const events = parseSse(text).map((event) => event.data);
  const ids = new Set<string>();
  const done: Json[] = [];
  let added = 0;
  events.forEach((event, position) => {
    if (event.sequence_number !== position) throw new Error(`sequence_number ${event.sequence_number} at position ${position}`);
    if (event.type === 'response.output_item.added') {
      if (event.output_index !== added) throw new Error(`output_index ${event.output_index}, expected ${added}`);
      if (!event.item.id || ids.has(event.item.id)) throw new Error(`missing or repeated item id ${event.item.id}`);
      ids.add(event.item.id);
      added++;
    }
    if (event.type === 'response.output_item.done') {
      if (event.item.id !== [...ids][event.output_index]) throw new Error('output_item.done for an unknown item');
      done.push(event.item);
    }
    if (typeof event.item_id === 'string' && !ids.has(event.item_id)) throw new Error(`event for unknown item ${event.item_id}`);
  });
  const terminal = events.at(-1) as Json;
  if (!['response.completed', 'response.incomplete', 'response.failed'].includes(terminal.type)) throw new Error(`no terminal event (last: ${terminal.type})`);
  if (terminal.type !== 'response.failed') {
    if (done.length !== added) throw new Error('an item was added but never done');
    if (JSON.stringify(terminal.response.output) !== JSON.stringify(done)) throw new Error('terminal output differs from the done items');
    for (const field of ['input_tokens', 'output_tokens', 'total_tokens']) if (typeof terminal.response.usage?.[field] !== 'number') throw new Error(`usage.${field} missing`);
  }
  return events;
}
