import { readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the gateway config (routing, prices, identity) comes from at init:
 * - `GATEWAY_CONFIG_FILE`: a JSON file; a relative path is read next to the running module. The
 *   stack writes the config beside the handler bundle (`gateway-config.json` in the task root):
 *   with sign-in and its policies the document outgrows the 4 KB Lambda allows for all of a
 *   function's environment variables together.
 * - `GATEWAY_CONFIG_JSON`: the document itself (npm start, tests, local runs).
 * Exactly one of them: two sources would leave a reader guessing which one the gateway obeys.
 */
export function readConfigText(env: NodeJS.ProcessEnv, moduleUrl: string): string {
  const file = env.GATEWAY_CONFIG_FILE;
  const inline = env.GATEWAY_CONFIG_JSON;
  if (file && inline) throw new Error('GATEWAY_CONFIG_FILE and GATEWAY_CONFIG_JSON are both set; set one of them');
  if (inline) return inline;
  if (!file) throw new Error('GATEWAY_CONFIG_FILE (a config file) or GATEWAY_CONFIG_JSON (the config itself) must be set');
  const path = isAbsolute(file) ? file : fileURLToPath(new URL(file, moduleUrl));
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`GATEWAY_CONFIG_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
}
