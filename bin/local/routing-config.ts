import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseJsonText } from '../../lambda/config/json-text.ts';
import { parseRoutingConfig, type RoutingConfig } from '../../lambda/config/routing.ts';
import { defaultRoutingConfig } from './default-config.ts';

/** The routing config `npm start` runs with, a line saying where it came from, and what to warn about. */
export interface StartupConfig {
  config: RoutingConfig;
  notice: string;
  warnings: string[];
}

/**
 * The file GATEWAY_CONFIG names, else the default config. Throws one message saying what is
 * wrong: where the JSON breaks (line, column, the line itself), or every invalid field.
 */
export function readRoutingConfig(env: NodeJS.ProcessEnv): StartupConfig {
  if (!env.GATEWAY_CONFIG) {
    const { config, notice } = defaultRoutingConfig(env);
    return { config, notice, warnings: missingCredentials(config, env) };
  }
  const path = resolve(env.GATEWAY_CONFIG);
  try {
    const config = parseRoutingConfig(parseJsonText(readFileSync(path, 'utf8')));
    return { config, notice: `Routing config: ${path}`, warnings: missingCredentials(config, env) };
  } catch (error) {
    throw new Error(`Cannot use GATEWAY_CONFIG=${path}: ${(error as Error).message}`);
  }
}

/** For `npm start`: the config, its warnings printed; a config that cannot be used stops the start with its message. */
export function routingConfigForStart(env: NodeJS.ProcessEnv): StartupConfig {
  try {
    const loaded = readRoutingConfig(env);
    for (const warning of loaded.warnings) console.warn(warning);
    return loaded;
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}

/**
 * One warning per upstream whose key variable is unset, naming the routes that send to it. A
 * warning, not an error: only that upstream's requests fail (500, naming the variable), and
 * upstreams signed with AWS credentials, self-hosted servers and the simulator need no key.
 */
export function missingCredentials(config: RoutingConfig, env: NodeJS.ProcessEnv): string[] {
  const warnings: string[] = [];
  for (const [name, upstream] of Object.entries(config.upstreams)) {
    const variables = upstream.apiKeyEnv === undefined ? [] : typeof upstream.apiKeyEnv === 'string' ? [upstream.apiKeyEnv] : upstream.apiKeyEnv;
    const unset = variables.filter((variable) => !env[variable]);
    if (unset.length === 0) continue;
    const routes = config.routes.filter((route) => [route, ...(route.targets ?? []), ...(route.fallbacks ?? [])].some((target) => target.upstream === name)).map((route) => route.model);
    const users = routes.length === 0 ? 'no route uses it' : `route${routes.length === 1 ? '' : 's'} ${routes.map((model) => `"${model}"`).join(', ')}`;
    warnings.push(`Warning: ${unset.join(', ')} ${unset.length === 1 ? 'is' : 'are'} not set: upstream "${name}" (${users}) fails its requests until ${unset.length === 1 ? 'it is' : 'they are'}.`);
  }
  return warnings;
}
