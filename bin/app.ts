import { App } from 'aws-cdk-lib';
import { CONTEXT_KEY, GatewayConfigError, parseGatewayConfig, type GatewayConfig } from '../lib/config.ts';
import { GatewayStack } from '../lib/gateway-stack.ts';

/**
 * The CDK app (`"app": "node bin/app.ts"` in cdk.json): validates the `gateway` context and
 * creates the stack. A bad config stops synth here, with each wrong field named.
 */
const app = new App();

let config: GatewayConfig;
try {
  config = parseGatewayConfig(app.node.tryGetContext(CONTEXT_KEY));
} catch (error) {
  if (!(error instanceof GatewayConfigError)) throw error;
  // The message is the whole story; a stack trace would only bury it.
  console.error(error.message);
  process.exit(1);
}

new GatewayStack(app, config.stackName, { config });
