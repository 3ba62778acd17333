import { readFileSync } from 'node:fs';

/**
 * Codex's built-in model catalog is a pretty-printed `{"models": [...]}` JSON document embedded
 * in its binary (openai/codex, codex-rs/core/models.json). The suite copies the catalogued `gpt-5.5` entry under the
 * gateway's model names and points `model_catalog_json` at the result, so Codex sends the classic
 * gpt-5.5 request shape (apply_patch as a `custom` tool, no "responses lite", no "model metadata
 * not found" warning) for those names; and copies its default model's entry (LITE_TEMPLATE) under
 * the routes' lite names, for which it sends the shape its default models do.
 */
const START = Buffer.from('{\n  "models": [');

/** Codex 0.171's default model, the template of its default ("lite") request shape. */
export const LITE_TEMPLATE = 'gpt-6.2-sol';

export interface CatalogEntry extends Record<string, unknown> {
  slug: string;
}

/** The catalog JSON embedded in the binary (string-aware brace matching from its first `{`). */
export function extractEmbeddedCatalog(binaryPath: string): { models: CatalogEntry[] } {
  const binary = readFileSync(binaryPath);
  const start = binary.indexOf(START);
  if (start < 0) throw new Error(`no embedded model catalog found in ${binaryPath}`);
  let depth = 0;
  let inString = false;
  for (let i = start; i < binary.length; i++) {
    const byte = binary[i];
    if (inString) {
      if (byte === 0x5c) i++; // backslash: skip the escaped byte
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x7b || byte === 0x5b) depth++;
    else if (byte === 0x7d || byte === 0x5d) {
      depth--;
      if (depth === 0) return JSON.parse(binary.subarray(start, i + 1).toString('utf8'));
    }
  }
  throw new Error(`the embedded model catalog in ${binaryPath} does not end`);
}

/** A catalog holding the `template` entry (default gpt-5.5) once per gateway model name. */
export function gatewayCatalog(binaryPath: string, slugs: string[], template = 'gpt-5.5'): { models: CatalogEntry[] } {
  const entry = extractEmbeddedCatalog(binaryPath).models.find((model) => model.slug === template);
  if (!entry) throw new Error(`Codex's embedded catalog has no "${template}" entry`);
  return { models: slugs.map((slug) => ({ ...entry, slug, display_name: slug })) };
}
