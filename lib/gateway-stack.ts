import { Annotations, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import type { RoutingConfig } from '../lambda/config/routing.ts';
import { PRIVATE_API_UPSTREAM_IDLE_TIMEOUT_MS, type GatewayConfig } from './config.ts';
import { GatewayAlarms } from './constructs/alarms.ts';
import { CustomDomain } from './constructs/custom-domain.ts';
import { GatewayDashboard } from './constructs/dashboard.ts';
import { GatewayFunction } from './constructs/gateway-function.ts';
import { IdentitySecret } from './constructs/identity-secret.ts';
import { IdentityTable } from './constructs/identity-table.ts';
import { KeyTable } from './constructs/key-table.ts';
import { LogQueries } from './constructs/log-queries.ts';
import { bedrockAccess } from './constructs/bedrock-access.ts';
import { PrivateApi } from './constructs/private-api.ts';
import { UpstreamSecret } from './constructs/upstream-secret.ts';
import { StatsTable } from './constructs/stats-table.ts';
import { UsageAggregator } from './constructs/usage-aggregator.ts';
import { UsageTable } from './constructs/usage-table.ts';
import { STACK_OUTPUTS } from './output-names.ts';

/** Stack options plus the validated `gateway` context (lib/config.ts). */
export interface GatewayStackProps extends StackProps {
  config: GatewayConfig;
}

/**
 * The deployed gateway: the streaming function and its URL, the key, usage and stats tables, the
 * usage aggregator, the upstream secret, a CloudWatch dashboard with saved log queries, optional
 * alarms and, when configured, a custom domain, sign-in's table and secret, and the private API.
 * Environment-agnostic (no account or region lookups), so `cdk synth` runs offline and the same
 * template deploys anywhere.
 */
export class GatewayStack extends Stack {
  constructor(scope: Construct, id: string, props: GatewayStackProps) {
    const { config, ...stackProps } = props;
    super(scope, id, { description: 'Agent gateway: Anthropic Messages and OpenAI Responses behind one issued key', ...stackProps });
    warnAboutUncredentialedUpstreams(this, config.routing);
    const awsAccess = bedrockAccess(config.routing);
    if (awsAccess.errors.length > 0) throw new Error(`The routing config cannot be deployed as it is:\n${awsAccess.errors.map((error) => `  - ${error}`).join('\n')}`);
    for (const warning of awsAccess.warnings) Annotations.of(this).addWarningV2('agent-gateway:wide-aws-grant', warning);

    const keyTable = new KeyTable(this, 'Keys');
    const usageTable = new UsageTable(this, 'Usage');
    const statsTable = new StatsTable(this, 'Stats');
    // Only upstreams with API keys need the secret; AWS-signed ones (Bedrock) use the function's role.
    const needsKeys = Object.values(config.routing.upstreams).some((upstream) => upstream.apiKeyEnv !== undefined);
    const upstreamSecret = needsKeys ? new UpstreamSecret(this, 'Upstream') : undefined;
    const gateway = new GatewayFunction(this, 'Gateway', {
      routing: config.routing,
      keyTable,
      usageTable,
      statsTable,
      upstreamSecret,
      awsAccess: awsAccess.statements,
      timeout: Duration.seconds(config.timeoutSeconds),
      memoryMb: config.memoryMb,
      runtimeClient: config.runtimeClient,
      reservedConcurrency: config.reservedConcurrency ?? undefined,
      logRetention: config.logRetentionDays,
      cors: config.cors,
      tracing: config.tracing,
      tuning: config.privateApi === undefined ? config.tuning : { upstreamIdleTimeoutMs: PRIVATE_API_UPSTREAM_IDLE_TIMEOUT_MS, ...config.tuning },
      metricsNamespace: config.stackName,
      functionUrl: config.privateApi?.functionUrl ?? true,
    });
    if (config.routing.identity !== undefined) this.#signIn(gateway, config.routing.identity.clientSecretEnv);

    new UsageAggregator(this, 'UsageAggregator', { statsTable, logRetention: config.logRetentionDays });

    // Observability: metrics come from the log line (EMF), so none of this is on the request path.
    const dashboard = new GatewayDashboard(this, 'Dashboard', { namespace: config.stackName, function: gateway.function, logGroup: gateway.logGroup, dashboardName: config.stackName });
    new LogQueries(this, 'Queries', { logGroup: gateway.logGroup, prefix: config.stackName });
    if (config.alarms !== undefined) new GatewayAlarms(this, 'Alarms', { namespace: config.stackName, function: gateway.function, config: config.alarms });

    // Outputs are created on the stack itself so their logical ids are exactly these names.
    if (gateway.url !== undefined) {
      this.#baseAddresses(gateway.url.url, {
        url: STACK_OUTPUTS.functionUrl,
        messages: STACK_OUTPUTS.messagesBaseUrl,
        responses: STACK_OUTPUTS.responsesBaseUrl,
      });
    }
    new CfnOutput(this, STACK_OUTPUTS.keyTableName, {
      value: keyTable.table.tableName,
      description: 'Key table: npm run keys -- create --name NAME --stack <this stack>',
    });
    new CfnOutput(this, STACK_OUTPUTS.usageTableName, {
      value: usageTable.table.tableName,
      description: 'Usage table: npm run keys -- usage --stack <this stack>',
    });
    new CfnOutput(this, STACK_OUTPUTS.dashboardUrl, {
      value: `https://console.aws.amazon.com/cloudwatch/home?region=${this.region}#dashboards/dashboard/${config.stackName}`,
      description: 'CloudWatch dashboard: traffic, errors, first byte, tokens and spend per model',
    });
    if (upstreamSecret) {
      new CfnOutput(this, STACK_OUTPUTS.upstreamSecretName, { value: upstreamSecret.secret.secretName, description: 'Upstream API keys secret (name)' });
      new CfnOutput(this, STACK_OUTPUTS.upstreamSecretArn, {
        value: upstreamSecret.secret.secretArn,
        description: `Upstream API keys secret: aws secretsmanager put-secret-value --secret-id <this> --secret-string '{"<upstream>":"<key>"}'`,
      });
    }

    if (config.customDomain !== undefined) {
      const domain = new CustomDomain(this, 'CustomDomain', { config: config.customDomain, gateway });
      this.#baseAddresses(domain.url, {
        url: STACK_OUTPUTS.customDomainUrl,
        messages: STACK_OUTPUTS.customDomainMessagesBaseUrl,
        responses: STACK_OUTPUTS.customDomainResponsesBaseUrl,
      });
    }

    if (config.privateApi !== undefined) {
      const api = new PrivateApi(this, 'PrivateApi', { config: config.privateApi, function: gateway.function, functionTimeout: Duration.seconds(config.timeoutSeconds), logRetention: config.logRetentionDays, tracing: config.tracing });
      gateway.servePrivateDomain(config.privateApi.domainName);
      this.#baseAddresses(api.url, {
        url: STACK_OUTPUTS.privateApiUrl,
        messages: STACK_OUTPUTS.privateApiMessagesBaseUrl,
        responses: STACK_OUTPUTS.privateApiResponsesBaseUrl,
      });
      new CfnOutput(this, STACK_OUTPUTS.privateApiVpcEndpointId, { value: api.vpcEndpointId, description: 'The execute-api VPC endpoint the private API answers through' });
      if (api.vpcEndpointDnsName !== undefined) {
        new CfnOutput(this, STACK_OUTPUTS.privateApiVpcEndpointDnsName, { value: api.vpcEndpointDnsName, description: `Point ${config.privateApi.domainName} here (an alias or CNAME in the DNS your clients use)` });
      }
    }
  }

  /** Sign-in's table and secret, granted to the function, with outputs for the operator. */
  #signIn(gateway: GatewayFunction, clientSecretMember: string | undefined): void {
    const table = new IdentityTable(this, 'Identity');
    const secret = new IdentitySecret(this, 'IdentitySecret');
    gateway.useSignIn(table, secret);
    new CfnOutput(this, STACK_OUTPUTS.identityTableName, { value: table.table.tableName, description: 'Sign-in table: npm run keys -- people list --stack <this stack>' });
    new CfnOutput(this, STACK_OUTPUTS.identitySecretArn, { value: secret.secret.secretArn, description: IdentitySecret.addClientSecretHint(clientSecretMember) });
  }

  /** `url` ends with '/', as Function URLs do; clients append `/v1/...` to the base addresses. */
  #baseAddresses(url: string, names: { url: string; messages: string; responses: string }): void {
    const login = names.url === STACK_OUTPUTS.privateApiUrl ? ", and Claude Code's gateway URL for /login (forceLoginGatewayUrl)" : '';
    new CfnOutput(this, names.url, { value: url, description: 'Gateway address' });
    new CfnOutput(this, names.messages, { value: `${url}first`, description: `Anthropic Messages base address (ANTHROPIC_BASE_URL)${login}` });
    new CfnOutput(this, names.responses, { value: `${url}second/v1`, description: 'OpenAI Responses base address (Codex base_url)' });
  }
}

/**
 * On AWS an upstream's key is read from the secret only when its config names `apiKeyEnv`;
 * without it the provider is called with no key at all, which is right for a self-hosted
 * server but a silent 401 for a public provider. Warn at synth time about the latter.
 */
function warnAboutUncredentialedUpstreams(scope: Construct, routing: RoutingConfig): void {
  for (const [name, upstream] of Object.entries(routing.upstreams)) {
    // Bedrock and `aws` upstreams sign with the function's role; a set baseUrl is a self-hosted server.
    if (upstream.type === 'simulator' || upstream.type === 'bedrock' || upstream.aws !== undefined || upstream.apiKeyEnv !== undefined || upstream.baseUrl !== undefined) continue;
    Annotations.of(scope).addWarningV2(
      'agent-gateway:upstream-without-credential',
      `Upstream "${name}" (${upstream.type}) has no "apiKeyEnv", so the gateway will call the provider without a key. Set "apiKeyEnv" (any variable name) to have it read the "${name}" member of the upstream secret.`,
    );
  }
}
