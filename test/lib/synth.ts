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

/** Sign-in with an IdP that has a client secret (the routing config's `identity`). */
export const IDENTITY = { issuer: 'https://idp.example.com/oauth2/default', clientId: '0oa1example', clientSecretEnv: 'GATEWAY_IDP_CLIENT_SECRET' };

/** The default routing with sign-in added. */
export function routingWithIdentity(identity: Record<string, unknown> = IDENTITY): Record<string, unknown> {
  return { ...(DEFAULT_GATEWAY.routing as Record<string, unknown>), identity };
}

/** A private API whose VPC endpoint the stack creates, with a record in a private hosted zone. */
export const PRIVATE_API = {
  domainName: 'gw.corp.example.com',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/1a2b3c4d-aaaa-bbbb-cccc-1234567890ab',
  vpcId: 'vpc-0123456789abcdef0',
  subnetIds: ['subnet-0123456789abcdef0', 'subnet-0123456789abcdef1'],
  clientCidrs: ['10.0.0.0/8', 'fd00::/8'],
  hostedZoneId: 'Z0PRIVATE123456789ABC',
};

/** A private API through an endpoint that exists already. */
export const PRIVATE_API_EXISTING_ENDPOINT = {
  domainName: 'gw.corp.example.com',
  certificateArn: PRIVATE_API.certificateArn,
  vpcEndpointId: 'vpce-0a1b2c3d4e5f60718',
  vpcEndpointDnsName: 'vpce-0a1b2c3d4e5f60718-abcdefgh.execute-api.eu-west-1.vpce.amazonaws.com',
  hostedZoneId: PRIVATE_API.hostedZoneId,
};
