import { readFileSync } from 'node:fs';
import { isRecord } from './upstream/wire.ts';

/**
 * Condenses a capture of the client suite (CLIENTS_CAPTURE=<dir> npm run test:clients; one
 * <dir>/<client>.jsonl per CLI) into what a gateway depends on, per client and endpoint: the
 * request headers (with their values where those are protocol, not identity), the beta flags, the
 * body's top-level keys, the input item and content block types, the tool types and the shapes
 * of `reasoning` and `thinking`. Run it on a capture of the pinned version and one of the new
 * version and diff the two outputs (docs/testing.md, "Bumping the client pins"):
 *
 *   node test/clients/capture-summary.ts old/codex.jsonl > old.txt
 *   node test/clients/capture-summary.ts new/codex.jsonl > new.txt
 *   diff old.txt new.txt
 */
const VALUE_HEADERS = new Set(['accept', 'accept-encoding', 'anthropic-version', 'content-encoding', 'content-type', 'originator', 'x-app', 'x-codex-beta-features', 'x-openai-internal-codex-responses-lite', 'x-stainless-lang', 'x-stainless-runtime']);

type Summary = Map<string, Set<string>>;

function add(summary: Summary, key: string, value: string): void {
  let values = summary.get(key);
  if (!values) summary.set(key, (values = new Set()));
  values.add(value);
}

function types(list: unknown): string[] {
  return Array.isArray(list) ? list.filter(isRecord).map((item) => String(item.type ?? (item.role ? `message:${String(item.role)}` : '?'))) : [];
}

export function summarize(lines: string[]): string {
  const summary: Summary = new Map();
  for (const line of lines) {
    if (!line.trim()) continue;
    const exchange = JSON.parse(line) as { method: string; url: string; headers: Record<string, unknown>; body: unknown };
    const at = `${exchange.method} ${exchange.url.split('?')[0]}${exchange.url.includes('?') ? ` ?${exchange.url.split('?')[1]}` : ''}`;
    for (const [name, value] of Object.entries(exchange.headers)) {
      if (name === 'anthropic-beta') for (const beta of String(value).split(',')) add(summary, `${at} | anthropic-beta`, beta.trim());
      else if (name === 'x-codex-turn-metadata') for (const key of Object.keys(JSON.parse(String(value)) as object)) add(summary, `${at} | x-codex-turn-metadata keys`, key);
      else add(summary, `${at} | headers`, VALUE_HEADERS.has(name) ? `${name}: ${String(value)}` : name);
    }
    const body = exchange.body;
    if (!isRecord(body)) continue;
    for (const key of Object.keys(body)) add(summary, `${at} | body keys`, key);
    for (const type of types(body.input)) add(summary, `${at} | input item types`, type);
    for (const message of Array.isArray(body.messages) ? body.messages.filter(isRecord) : []) {
      add(summary, `${at} | message roles`, String(message.role));
      for (const type of types(message.content)) add(summary, `${at} | content block types`, type);
    }
    const tools = [...(Array.isArray(body.tools) ? body.tools : []), ...(Array.isArray(body.input) ? body.input.filter(isRecord).filter((item) => item.type === 'additional_tools').flatMap((item) => (Array.isArray(item.tools) ? item.tools : [])) : [])];
    for (const tool of tools.filter(isRecord)) add(summary, `${at} | tool types`, String(tool.type ?? (tool.input_schema ? 'input_schema' : '?')));
    for (const field of ['reasoning', 'thinking', 'text', 'output_config', 'context_management'] as const) {
      if (isRecord(body[field])) add(summary, `${at} | ${field}`, JSON.stringify(Object.fromEntries(Object.entries(body[field] as object).map(([key, value]) => [key, typeof value === 'string' || typeof value === 'boolean' ? value : typeof value]))));
    }
  }
  return [...summary.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, values]) => `${key}:\n${[...values].sort().map((value) => `  ${value}`).join('\n')}`)
    .join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = process.argv[2];
  if (!file) {
    console.error('usage: node test/clients/capture-summary.ts <capture.jsonl>');
    process.exit(2);
  }
  console.log(summarize(readFileSync(file, 'utf8').split('\n')));
}
