import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseJsonText } from '../../lambda/config/json-text.ts';
import { parseRoutingConfig, type RoutingConfig } from '../../lambda/config/routing.ts';
import { UsageError } from './key-options.ts';

/**
 * The gateway config the key CLI resolves policy with (`people show`): `--config FILE`, else the
 * file npm start reads (GATEWAY_CONFIG), else the deployment's (cdk.json's `gateway.routing` or
 * `routingFile`, in the current directory). Read as npm start reads it (broken JSON named by
 * line and column); lib/config.ts is not imported: it brings aws-cdk-lib, which a production
 * install (`npm ci --omit=dev`) does not have.
 */
export function readGatewayConfig(file: string | undefined, env: NodeJS.ProcessEnv, cwd = process.cwd()): RoutingConfig {
  const path = file ?? env.GATEWAY_CONFIG;
  if (path !== undefined) return readFile(resolve(cwd, path));
  const cdk = resolve(cwd, 'cdk.json');
  if (!existsSync(cdk)) throw new UsageError('This needs the gateway config: --config FILE, GATEWAY_CONFIG, or run it where the deployment\'s cdk.json is');
  const context = (parseJsonText(readFileSync(cdk, 'utf8')) as { context?: { gateway?: { routing?: unknown; routingFile?: string } } }).context?.gateway;
  if (context?.routingFile !== undefined) return readFile(resolve(dirname(cdk), context.routingFile));
  if (context?.routing === undefined) throw new UsageError(`${cdk} has no gateway.routing or gateway.routingFile`);
  return parseRoutingConfig(context.routing);
}

function readFile(path: string): RoutingConfig {
  let input: unknown;
  try {
    input = parseJsonText(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`Cannot read the gateway config ${path}: ${(error as Error).message}`);
  }
  return parseRoutingConfig(input);
}
