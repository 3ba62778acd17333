import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deliverFirstKey, FIRST_KEY_FILE } from '../../../bin/local/first-key.ts';

const KEY = 'gwk_example.key';
const SECRET = `  ${KEY}\n\nexport ANTHROPIC_AUTH_TOKEN=${KEY}`;

test('on a terminal the key is printed, and no file is written', () => {
  const dir = mkdtempSync(join(tmpdir(), 'first-key-'));
  const text = deliverFirstKey({ isTTY: true }, dir, 'key_1', SECRET);
  expect(text).toContain(KEY);
  expect(existsSync(join(dir, FIRST_KEY_FILE))).toBe(false);
});

test('when the output is a log, it gets the path of a 0600 file that holds the key, never the key', () => {
  const dir = mkdtempSync(join(tmpdir(), 'first-key-'));
  // A leftover of an earlier folder, readable by all: replaced, and closed to others.
  writeFileSync(join(dir, FIRST_KEY_FILE), 'old', { mode: 0o644 });
  const text = deliverFirstKey({ isTTY: false }, dir, 'key_1', SECRET);
  expect(text).not.toContain('gwk_');
  expect(text).toContain(join(dir, FIRST_KEY_FILE));
  expect(statSync(join(dir, FIRST_KEY_FILE)).mode & 0o777).toBe(0o600);
  expect(readFileSync(join(dir, FIRST_KEY_FILE), 'utf8')).toMatch(/^First API key of this gateway \(key_1\)[^]*gwk_example\.key[^]*ANTHROPIC_AUTH_TOKEN=gwk_example\.key\n$/);
});
