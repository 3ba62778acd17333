import 'aws-cdk-lib/testhelpers/jest-autoclean';
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { CONTEXT_KEY, parseGatewayConfig, type GatewayConfig } from '../../lib/config.ts';
import { PROJECT_ROOT } from '../../lib/constructs/gateway-function.ts';
import { GatewayStack } from '../../lib/gateway-stack.ts';

/** cdk.json's context: the feature flags the real synth runs with, and the default `gateway`. */
export const CDK_CONTEXT: Record<string, unknown> = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
export const DEFAULT_GATEWAY = CDK_CONTEXT[CONTEXT_KEY] as Record<string, unknown>;

export interface Synthesized {
  app: App;
  stack: GatewayStack;
  config: GatewayConfig;
  template: Template;
}

/**
 * The stack as `cdk synth` builds it from cdk.json, with `overrides` merged into the `gateway`
 * context. Bundling is skipped unless asked for: it is covered once, and costs a second.
 */
export function synthGateway(overrides: Record<string, unknown> = {}, options: { bundle?: boolean } = {}): Synthesized {
  const app = new App({ context: { ...CDK_CONTEXT, 'aws:cdk:bundling-stacks': options.bundle ? ['**'] : [] } });
  const config = parseGatewayConfig({ ...DEFAULT_GATEWAY, ...overrides }, PROJECT_ROOT);
  const stack = new GatewayStack(app, config.stackName, { config });
  return { app, stack, config, template: Template.fromStack(stack) };
}

/** An empty stack under cdk.json's feature flags, for testing one construct alone. */
export function bareStack(): Stack {
  return new Stack(new App({ context: CDK_CONTEXT }), 'Bare');
}

/**
 * The one resource of `type` in the template (of those whose logical id starts with `prefix`:
 * 'Gateway' for the gateway function's, beside the usage aggregator's), failing when there are
 * none or several.
 */
export function onlyResource(template: Template, type: string, prefix = ''): { logicalId: string; properties: Record<string, any> } {
  const found = Object.entries(template.findResources(type)).filter(([logicalId]) => logicalId.startsWith(prefix));
  if (found.length !== 1) throw new Error(`expected one ${type}${prefix ? ` under ${prefix}` : ''}, found ${found.length}`);
  const [logicalId, resource] = found[0] as [string, { Properties: Record<string, any> }];
  return { logicalId, properties: resource.Properties };
}

export const CUSTOM_DOMAIN = {
  domainName: 'ai.example.com',
  certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0f3d1c2b-aaaa-bbbb-cccc-1234567890ab',
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  zoneName: 'example.com',
};
