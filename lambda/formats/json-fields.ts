/**
 * Byte-preserving edits of a JSON request body.
 *
 * Passthrough must forward the client's body untouched (thinking signatures, cache prefixes and
 * fields we do not know all depend on it), yet a route may rename the model. Re-serializing the
 * whole body would renormalize numbers and escapes, so this scanner finds the top-level member
 * and splices only its value.
 */

/**
 * Returns `json` with the top-level string member `key` set to `value`, every other byte
 * unchanged. `json` must be a valid JSON object (the caller has parsed it already); when the
 * member is absent the text is returned as is.
 */
export function replaceTopLevelString(json: string, key: string, value: string): string {
  const span = findTopLevelValue(json, key);
  if (!span) return json;
  return json.slice(0, span.start) + JSON.stringify(value) + json.slice(span.end);
}

/**
 * Returns `json` with the top-level member `key` set to the number `value`: the member's value
 * is replaced in place, or the member is added first; every other byte is unchanged.
 */
export function setTopLevelNumber(json: string, key: string, value: number): string {
  const span = findTopLevelValue(json, key);
  if (span) return json.slice(0, span.start) + String(value) + json.slice(span.end);
  const open = json.indexOf('{');
  const empty = json.slice(open + 1).trim().startsWith('}');
  return `${json.slice(0, open + 1)}${JSON.stringify(key)}:${value}${empty ? '' : ','}${json.slice(open + 1)}`;
}

interface Span {
  start: number;
  end: number;
}

/** Locates the value of the last top-level member named `key` (JSON.parse keeps the last one). */
function findTopLevelValue(json: string, key: string): Span | undefined {
  let depth = 0;
  let found: Span | undefined;
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      const end = skipString(json, i);
      if (depth === 1 && expectKey) {
        const colon = skipWhitespace(json, end);
        const valueStart = skipWhitespace(json, colon + 1);
        if (JSON.parse(json.slice(i, end)) === key) {
          found = { start: valueStart, end: skipValue(json, valueStart) };
        }
        expectKey = false;
        i = colon;
        continue;
      }
      i = end - 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      depth++;
      expectKey = c === 123 && depth === 1;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    } else if (c === 44 /* , */ && depth === 1) {
      expectKey = true;
    }
  }
  return found;
}

/** Index just past the string literal that opens at `start` (jumps quote to quote: prompts are mostly string). */
function skipString(json: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = json.indexOf('"', from);
    if (quote === -1) return json.length;
    let escapes = 0;
    for (let j = quote - 1; json.charCodeAt(j) === 92 /* \ */; j--) escapes++;
    if (escapes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function skipWhitespace(json: string, start: number): number {
  let i = start;
  while (i < json.length && (json[i] === ' ' || json[i] === '\n' || json[i] === '\r' || json[i] === '\t')) i++;
  return i;
}

/** Index just past the JSON value that starts at `start`. */
function skipValue(json: string, start: number): number {
  const c = json.charCodeAt(start);
  if (c === 34) return skipString(json, start);
  if (c !== 123 && c !== 91) {
    let i = start;
    while (i < json.length && !',}] \n\r\t'.includes(json[i] as string)) i++;
    return i;
  }
  let depth = 0;
  for (let i = start; i < json.length; i++) {
    const ch = json.charCodeAt(i);
    if (ch === 34) i = skipString(json, i) - 1;
    else if (ch === 123 || ch === 91) depth++;
    else if ((ch === 125 || ch === 93) && --depth === 0) return i + 1;
  }
  return json.length;
}

/** Parses text that should hold a JSON object; undefined for anything else. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export interface JsonShape {
  /** The nesting depth passed `maxDepth` (the scan stopped there). */
  tooDeep: boolean;
  /** The first of the watched top-level members that appears twice. */
  duplicate?: string;
  /** More values than `maxValues` (the scan stopped there). */
  tooManyValues?: true;
  /**
   * How many values the text holds, at most: one per object or array and one per comma (a
   * scalar's or a member's). Up to where the scan stopped, when it stopped early.
   */
  values: number;
}

/**
 * One pass over a JSON text, before it is parsed: its nesting depth (code that walks the parsed
 * value recursively must not meet a 100,000-deep document), duplicates among `watched`
 * top-level members, and the number of values. JSON.parse keeps the last of two members and
 * another parser may keep the first, so a duplicated `model` could be routed and limited as one
 * model and served as another. Parsing costs memory and time per value (an empty object in an
 * array takes about 100 bytes of heap for its 3 bytes of text), so the count bounds it.
 */
export function scanJsonShape(json: string, maxDepth: number, watched: ReadonlySet<string>, maxValues = Number.POSITIVE_INFINITY): JsonShape {
  let depth = 0;
  let values = 0;
  let expectKey = false;
  const seen = new Set<string>();
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 34 /* " */) {
      const end = skipString(json, i);
      if (depth === 1 && expectKey) {
        expectKey = false;
        const key = json.slice(i + 1, end - 1);
        // Watched names have no escapes; an escaped spelling is decoded to compare.
        const name = key.includes('\\') ? safeParseString(json.slice(i, end)) : key;
        if (name !== undefined && watched.has(name)) {
          if (seen.has(name)) return { tooDeep: false, duplicate: name, values };
          seen.add(name);
        }
      }
      i = end - 1;
    } else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > maxDepth) return { tooDeep: true, values };
      if (++values > maxValues) return { tooDeep: false, tooManyValues: true, values };
      expectKey = c === 123 && depth === 1;
    } else if (c === 125 /* } */ || c === 93 /* ] */) {
      depth--;
    } else if (c === 44 /* , */) {
      if (++values > maxValues) return { tooDeep: false, tooManyValues: true, values };
      if (depth === 1) expectKey = true;
    }
  }
  return { tooDeep: false, values };
}

function safeParseString(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

/** Where each top-level member of an object text starts (its key) and ends (after its value). */
function topLevelMembers(json: string): { key: string; start: number; end: number }[] {
  const members: { key: string; start: number; end: number }[] = [];
  let i = skipWhitespace(json, 0);
  if (json.charCodeAt(i) !== 123 /* { */) return members;
  i = skipWhitespace(json, i + 1);
  while (i < json.length && json.charCodeAt(i) === 34) {
    const keyEnd = skipString(json, i);
    const key = safeParseString(json.slice(i, keyEnd)) ?? '';
    const valueStart = skipWhitespace(json, skipWhitespace(json, keyEnd) + 1);
    const end = skipValue(json, valueStart);
    members.push({ key, start: i, end });
    i = skipWhitespace(json, end);
    if (json.charCodeAt(i) !== 44 /* , */) break;
    i = skipWhitespace(json, i + 1);
  }
  return members;
}

/**
 * Returns `json` without its top-level members named in `keys` (every occurrence), every other
 * byte unchanged (a separating comma goes with the member).
 */
export function removeTopLevelMembers(json: string, keys: ReadonlySet<string>): string {
  const members = topLevelMembers(json);
  let out = json;
  for (let index = members.length - 1; index >= 0; index--) {
    const member = members[index] as { key: string; start: number; end: number };
    if (!keys.has(member.key)) continue;
    const next = members[index + 1];
    const previous = members[index - 1];
    // Take the comma after the member, or, for the last one, the comma before it.
    const [from, to] = next ? [member.start, next.start] : previous ? [previous.end, member.end] : [member.start, member.end];
    out = out.slice(0, from) + out.slice(to);
    members.splice(index, 1);
    if (next) for (const later of members.slice(index)) (later.start -= to - from), (later.end -= to - from);
  }
  return out;
}

/** Returns `json` with `"key": <valueJson>` added as its first member, every other byte unchanged. */
export function prependTopLevelMember(json: string, key: string, valueJson: string): string {
  const open = json.indexOf('{');
  const empty = json.slice(open + 1).trim().startsWith('}');
  return `${json.slice(0, open + 1)}${JSON.stringify(key)}:${valueJson}${empty ? '' : ','}${json.slice(open + 1)}`;
}

/** The names of an object text's top-level members, in order. */
export function topLevelKeys(json: string): string[] {
  return topLevelMembers(json).map((member) => member.key);
}
