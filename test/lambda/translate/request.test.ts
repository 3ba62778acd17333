import { readFileSync, writeFileSync } from 'node:fs';
import { translateRequest, type ClientFormat, type UpstreamFormat } from '../../../lambda/translate/translator.ts';

/**
 * Golden request translations from realistic Claude Code and Codex bodies (captured from the real CLIs, test/fixtures/translate/).
 * The goldens were reviewed by hand; after an intended change, regenerate them with
 * UPDATE_GOLDEN=1 and review the diff.
 */
const dir = new URL('../../fixtures/translate/', import.meta.url);
const read = (name: string) => JSON.parse(readFileSync(new URL(name, dir), 'utf8'));

const cases: [string, UpstreamFormat][] = [
  ['claude-code-request', 'responses'],
  ['claude-code-request', 'chat'],
  ['codex-request', 'messages'],
  ['codex-request', 'chat'],
];

test.each(cases)('%s -> %s matches its golden', (name, upstream) => {
  const { client, body } = read(`${name}.json`) as { client: ClientFormat; body: Record<string, unknown> };
  const translated = translateRequest(client, body, upstream, { model: 'upstream-model', maxOutputTokens: 48000, maxTokensField: 'max_tokens' });
  const actual = { body: translated.body, dropped: translated.dropped };
  const golden = `${name}.to-${upstream}.golden.json`;
  if (process.env.UPDATE_GOLDEN) writeFileSync(new URL(golden, dir), `${JSON.stringify(actual, null, 1)}\n`);
  expect(actual).toEqual(read(golden));
});
