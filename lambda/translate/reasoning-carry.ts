import type { ReasoningCarrier } from './ir.ts';

/**
 * Reasoning state crosses formats inside the other format's opaque field: an OpenAI reasoning
 * item (id + encrypted_content) rides in an Anthropic thinking `signature`, an Anthropic
 * thinking block (signature + text, or redacted data) in an OpenAI `encrypted_content`. Clients
 * echo these back untouched, so the next request can hand each provider exactly what it issued.
 * Tokens without the prefix are native to the format they arrived in.
 *
 * "Anthropic" here means every platform serving Claude's Messages format, Amazon Bedrock
 * included: Anthropic documents that thinking signatures "are compatible across platforms (Claude
 * APIs, Amazon Bedrock, and Google Cloud)" (https://platform.claude.com/docs/en/build-with-claude/extended-thinking,
 * "Thinking encryption"). So a fallback from the Anthropic API to Bedrock (or back) keeps the
 * conversation's thinking blocks, while an OpenAI-side target treats them as foreign reasoning.
 * (Newer models also bind a block to the model, and on Bedrock the account, that produced it; a
 * block the target cannot read is removed by the API without an error:
 * https://platform.claude.com/docs/en/build-with-claude/preserved-thinking.)
 */
const PREFIX = 'gw1.';

type Packed = { p: 'o'; id: string; ec: string | null } | { p: 'a'; s: string; t: string } | { p: 'a'; r: string };

export function packCarrier(carrier: ReasoningCarrier, thinkingText: string): string {
  let packed: Packed;
  if (carrier.provider === 'openai') packed = { p: 'o', id: carrier.id, ec: carrier.encryptedContent };
  else if ('signature' in carrier) packed = { p: 'a', s: carrier.signature, t: thinkingText };
  else packed = { p: 'a', r: carrier.redactedData };
  return PREFIX + Buffer.from(JSON.stringify(packed)).toString('base64url');
}

export interface UnpackedCarrier {
  carrier: ReasoningCarrier;
  /** The exact thinking text Anthropic signed, when the carrier holds one. */
  text?: string;
}

/** True for a token the translator packed: reasoning another provider issued. */
export function isPackedCarrier(token: unknown): boolean {
  return typeof token === 'string' && token.startsWith(PREFIX);
}

/** The carrier inside a packed token, or undefined for a native (or unreadable) token. */
export function unpackCarrier(token: string | null | undefined): UnpackedCarrier | undefined {
  if (typeof token !== 'string' || !token.startsWith(PREFIX)) return undefined;
  let packed: Packed;
  try {
    packed = JSON.parse(Buffer.from(token.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (packed.p === 'o' && typeof packed.id === 'string') return { carrier: { provider: 'openai', id: packed.id, encryptedContent: packed.ec ?? null } };
  if (packed.p === 'a' && 's' in packed && typeof packed.s === 'string') return { carrier: { provider: 'anthropic', signature: packed.s }, text: packed.t };
  if (packed.p === 'a' && 'r' in packed && typeof packed.r === 'string') return { carrier: { provider: 'anthropic', redactedData: packed.r } };
  return undefined;
}
