/** Small readers shared by the request parsers and emitters (bodies are untyped JSON). */
export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
export const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);
export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const num = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);

/** Claude Code's per-request attribution line; it changes every request and defeats upstream prompt caching. */
export const BILLING_HEADER = /^x-anthropic-billing-header:/;

/** `data:<type>;base64,<data>` -> parts, or undefined for a plain URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1] as string, data: match[2] as string } : undefined;
}

/** Parses function-call arguments: `""` is `{}`, a non-object is wrapped so nothing is lost. */
export function parseArguments(text: unknown): Json {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : { value };
  } catch {
    return { arguments: text };
  }
}
