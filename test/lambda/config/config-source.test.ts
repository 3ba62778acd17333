import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readConfigText } from '../../../lambda/config/config-source.ts';

describe('readConfigText', () => {
  const dir = mkdtempSync(join(tmpdir(), 'config-source-'));
  // The module reading the config, as the bundle's index.mjs sits in the task root.
  const moduleUrl = pathToFileURL(join(dir, 'index.mjs')).href;
  writeFileSync(join(dir, 'gateway-config.json'), '{"from":"file"}');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('reads a relative GATEWAY_CONFIG_FILE next to the running module, whatever the working directory', () => {
    expect(process.cwd()).not.toBe(dir);
    expect(readConfigText({ GATEWAY_CONFIG_FILE: 'gateway-config.json' }, moduleUrl)).toBe('{"from":"file"}');
  });

  test('reads an absolute GATEWAY_CONFIG_FILE as it is', () => {
    expect(readConfigText({ GATEWAY_CONFIG_FILE: join(dir, 'gateway-config.json') }, 'file:///elsewhere/index.mjs')).toBe('{"from":"file"}');
  });

  test('takes GATEWAY_CONFIG_JSON as the document itself', () => {
    expect(readConfigText({ GATEWAY_CONFIG_JSON: '{"from":"env"}' }, moduleUrl)).toBe('{"from":"env"}');
  });

  test('refuses both sources at once, and neither', () => {
    expect(() => readConfigText({ GATEWAY_CONFIG_FILE: 'gateway-config.json', GATEWAY_CONFIG_JSON: '{}' }, moduleUrl)).toThrow('GATEWAY_CONFIG_FILE and GATEWAY_CONFIG_JSON are both set');
    expect(() => readConfigText({}, moduleUrl)).toThrow('GATEWAY_CONFIG_FILE (a config file) or GATEWAY_CONFIG_JSON (the config itself) must be set');
  });

  test('names the path it could not read', () => {
    expect(() => readConfigText({ GATEWAY_CONFIG_FILE: 'missing.json' }, moduleUrl)).toThrow(`GATEWAY_CONFIG_FILE: cannot read ${join(dir, 'missing.json')}: ENOENT`);
  });
});
