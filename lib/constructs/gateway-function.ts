import { fileURLToPath } from 'node:url';
import { Aws, Duration, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, FunctionUrlAuthType, HttpMethod, InvokeMode, LoggingFormat, Runtime, Tracing, type FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { RoutingConfig } from '../../lambda/config/routing.ts';
import type { CorsConfig, TuningConfig } from '../config.ts';
import { besideBundleCommands, RUNTIME_WRAPPER_PATH } from '../bundle-files.ts';
import type { AccessStatement } from './bedrock-access.ts';
import { CONFIG_FILE_NAME, configFileHooks } from './config-file.ts';
import { consoleAssetHooks } from './console-assets.ts';
import type { IdentitySecret } from './identity-secret.ts';
import type { IdentityTable } from './identity-table.ts';
import type { KeyTable } from './key-table.ts';
import type { StatsTable } from './stats-table.ts';
import type { UsageTable } from './usage-table.ts';
import type { UpstreamSecret } from './upstream-secret.ts';

/** The project root: NodejsFunction resolves the lock file and the bundle's inputs from here. */
export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The Lambda entry module; exported for the bundle-budget test. */
export const HANDLER_ENTRY = fileURLToPath(new URL('../../lambda/handler.ts', import.meta.url));

/** Matches the runtime below; with Runtime.NODEJS_22_X (the fallback) use 'node22'. */
const NODE_TARGET = 'node24';

/**
 * How the handler is bundled. The bundle-budget test builds with this same object, so the size
 * and the module list it checks are those of what deploys.
 */
export const HANDLER_BUNDLING = {
  format: OutputFormat.ESM,
  target: NODE_TARGET,
  minify: true,
  // Maps give readable stack traces when NODE_OPTIONS=--enable-source-maps is set for
  // debugging; without the sources they stay small and ship no source code.
  sourceMap: true,
  sourcesContent: false,
  // ESM builds of the SDK and middy tree-shake better than their CommonJS builds.
  mainFields: ['module', 'main'],
  // The handler imports no AWS SDK client (lambda/aws/ signs its few calls). true keeps esbuild
  // from marking @aws-sdk/* external, so an accidental import fails the bundle-budget test
  // instead of loading the runtime's copy unseen.
  bundleAwsSDK: true,
  // A CommonJS dependency calling require() would otherwise fail inside an ES module.
  banner: "import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
  commandHooks: {
    beforeBundling: () => [],
    beforeInstall: () => [],
    afterBundling: (inputDir: string, outputDir: string) => besideBundleCommands(inputDir, outputDir, NODE_TARGET),
  },
} as const satisfies BundlingOptions;

/** Optional tuning setting -> the environment variable lambda/config/settings.ts reads. */
export const TUNING_ENVIRONMENT = {
  keyCacheSeconds: 'GATEWAY_KEY_CACHE_SECONDS',
  sessionCacheSeconds: 'GATEWAY_SESSION_CACHE_SECONDS',
  maxBodyBytes: 'GATEWAY_MAX_BODY_BYTES',
  firstByteTimeoutMs: 'GATEWAY_FIRST_BYTE_TIMEOUT_MS',
  deadlineMarginMs: 'GATEWAY_DEADLINE_MARGIN_MS',
  upstreamIdleTimeoutMs: 'GATEWAY_UPSTREAM_IDLE_TIMEOUT_MS',
  keepaliveMs: 'GATEWAY_KEEPALIVE_MS',
  lastUsedIntervalSeconds: 'GATEWAY_LAST_USED_INTERVAL_SECONDS',
  streamPadBytes: 'GATEWAY_STREAM_PAD_BYTES',
  maxInFlightPerKey: 'GATEWAY_MAX_IN_FLIGHT_PER_KEY',
} as const satisfies Record<keyof TuningConfig, string>;

/** What the function is wired to, and its sizing (from the `gateway` context). */
export interface GatewayFunctionProps {
  routing: RoutingConfig;
  keyTable: KeyTable;
  usageTable: UsageTable;
  statsTable: StatsTable;
  /** Absent when no upstream takes API keys (Bedrock and other AWS-signed upstreams need none). */
  upstreamSecret: UpstreamSecret | undefined;
  /** What the routing invokes on AWS (Bedrock), as IAM statements for the role. */
  awsAccess: AccessStatement[];
  timeout: Duration;
  memoryMb: number;
  /** The gateway's own runtime client, or AWS's (the wrapper reads GATEWAY_RUNTIME_CLIENT). */
  runtimeClient: 'gateway' | 'aws';
  reservedConcurrency: number | undefined;
  logRetention: RetentionDays;
  /** Absent = the Function URL answers no CORS preflight. */
  cors: CorsConfig | undefined;
  /** X-Ray active tracing. */
  tracing: boolean;
  tuning: TuningConfig;
  /** CloudWatch namespace of the request metrics (EMF in the log line). */
  metricsNamespace: string;
  /** false: no Function URL (the private API is then the only way in). Default true. */
  functionUrl?: boolean;
}

/**
 * The gateway Lambda (lambda/handler.ts) behind a streaming Function URL. Both path families,
 * `/first/...` (Messages) and `/second/...` (Responses), are served by this one URL.
 *
 * The URL's auth type is NONE on purpose: clients authenticate with keys issued by the gateway,
 * checked in the function against the key table. The function's role can write its own log
 * group, read and stamp keys in the key table, count usage in the usage table and read the
 * upstream secret; with sign-in, also the sign-in items of the identity table and its secret
 * (`useSignIn`); nothing more.
 */
export class GatewayFunction extends Construct {
  readonly function: NodejsFunction;
  /** Absent when `functionUrl` is false. */
  readonly url: FunctionUrl | undefined;
  readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: GatewayFunctionProps) {
    super(scope, id);
    this.logGroup = new LogGroup(this, 'Logs', { retention: props.logRetention });
    // Our own role instead of the default one: the default attaches AWSLambdaBasicExecutionRole,
    // whose log permissions apply to every log group in the account.
    const role = new Role(this, 'Role', {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: 'Agent gateway function: its log group, its tables, the upstream secret and the Bedrock models its routes name only.',
    });
    this.logGroup.grantWrite(role);
    props.keyTable.grantKeyLookup(role);
    // The console's admin API (/admin/api) manages keys from this same function.
    props.keyTable.grantKeyAdministration(role);
    props.usageTable.grantMetering(role);
    props.statsTable.grantGateway(role);
    props.upstreamSecret?.grantRead(role);
    for (const statement of props.awsAccess) {
      role.addToPolicy(new PolicyStatement({ sid: statement.sid, actions: statement.actions, resources: statement.resources, ...(statement.conditions ? { conditions: statement.conditions } : {}) }));
    }

    this.function = new NodejsFunction(this, 'Handler', {
      entry: HANDLER_ENTRY,
      handler: 'handler',
      projectRoot: PROJECT_ROOT,
      depsLockFilePath: `${PROJECT_ROOT}package-lock.json`,
      // Lambda's newest Node; Runtime.NODEJS_22_X is the fallback (set target 'node22' with it).
      runtime: Runtime.NODEJS_24_X,
      // Cheaper per GB-second than x86 with the same pure-JavaScript bundle.
      architecture: Architecture.ARM_64,
      // The routing config rides along as a file beside index.mjs (GATEWAY_CONFIG_FILE), after the
      // files the handler reads (the login helper), and the console page at ui/dist
      // (lambda/admin/assets.ts reads it there).
      bundling: { ...HANDLER_BUNDLING, commandHooks: consoleAssetHooks(configFileHooks(props.routing, HANDLER_BUNDLING.commandHooks)) },
      role,
      logGroup: this.logGroup,
      loggingFormat: LoggingFormat.JSON,
      timeout: props.timeout,
      memorySize: props.memoryMb,
      reservedConcurrentExecutions: props.reservedConcurrency,
      // Adds the X-Ray write permission to the role when on.
      tracing: props.tracing ? Tracing.ACTIVE : undefined,
      description: 'Agent gateway: Anthropic Messages (/first) and OpenAI Responses (/second) behind issued keys',
      environment: gatewayEnvironment(props),
    });

    this.url = props.functionUrl === false ? undefined : this.function.addFunctionUrl({
      authType: FunctionUrlAuthType.NONE,
      // Buffered mode would hold a whole stream (and cap it at 6 MB) before the client sees it.
      invokeMode: InvokeMode.RESPONSE_STREAM,
      cors:
        props.cors === undefined
          ? undefined
          : {
              allowedOrigins: props.cors.allowedOrigins,
              allowedHeaders: props.cors.allowedHeaders,
              allowedMethods: [HttpMethod.GET, HttpMethod.POST],
              maxAge: Duration.seconds(props.cors.maxAgeSeconds),
            },
    });
    acknowledgeChecks(this.function, role, props.tracing, props.awsAccess);
  }

  /**
   * Makes the function refuse (403) requests whose `x-origin-verify` header is not `value`:
   * the custom-domain construct passes the value CloudFront adds to every request it forwards.
   */
  requireOriginHeader(value: string): void {
    this.function.addEnvironment('GATEWAY_ORIGIN_SECRET', value);
  }

  /** Sign-in (the routing config's `identity`): its table and secret, named to the function and granted. */
  useSignIn(table: IdentityTable, secret: IdentitySecret): void {
    table.grantSignIn(this.function);
    secret.grantRead(this.function);
    this.function.addEnvironment('GATEWAY_IDENTITY_TABLE', table.table.tableName);
    this.function.addEnvironment('GATEWAY_IDENTITY_SECRET', secret.secret.secretArn);
  }

  /**
   * The private API's custom domain: REST events are answered as requests to it (lambda/runtime-event.ts),
   * the one name whose certificate Claude Code pinned, whichever endpoint name the request came in on.
   */
  servePrivateDomain(domainName: string): void {
    this.function.addEnvironment('GATEWAY_PRIVATE_API_DOMAIN', domainName);
  }
}

/** The cdk-nag findings that do not apply to this function (test/lib/cdk-nag.test.ts runs the packs). */
function acknowledgeChecks(fn: NodejsFunction, role: Role, tracing: boolean, awsAccess: AccessStatement[]): void {
  for (const resource of new Set(awsAccess.flatMap((statement) => statement.resources).filter((resource) => resource.includes('*')))) {
    Validations.of(role).acknowledge({
      // cdk-nag names the account as <AWS::AccountId> in its finding ids.
      id: `AwsSolutions-IAM5[Resource::${resource.split(Aws.ACCOUNT_ID).join('<AWS::AccountId>')}]`,
      reason: resource.includes(':bedrock-mantle:')
        ? 'bedrock-mantle inference is authorized on a Mantle project; requests without a project header use the account\'s default one, so every project of the account in the upstream\'s Region is allowed (as AWS\'s AmazonBedrockMantleInferenceAccess policy does).'
        : resource.includes('::foundation-model/') && !resource.endsWith('/*')
          ? 'A cross-Region inference profile routes to its foundation model in any of its destination Regions: the model is named, the Region is not, and the statement applies only through that profile (bedrock:InferenceProfileArn condition).'
          : 'The upstream sets "anyModel": routes pass client model names to Bedrock, so no model can be named (said at synth).',
    });
  }
  Validations.of(fn).acknowledge({
    id: 'Serverless-LambdaDLQ',
    reason: 'A dead-letter queue receives failed asynchronous invocations; this function is only invoked synchronously, through its Function URL, and the client receives every failure.',
  });
  if (!tracing) {
    Validations.of(fn).acknowledge({
      id: 'Serverless-LambdaTracing',
      reason: 'X-Ray tracing is an opt-in (gateway.tracing): every request is already timed in its log line, and traces are billed.',
    });
  } else {
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Active tracing grants xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level permissions (Resource must be "*").',
    });
  }
}

/**
 * The environment contract with lambda/handler.ts. Identifiers only: the upstream API keys stay
 * in Secrets Manager and are read at run time.
 */
function gatewayEnvironment(props: GatewayFunctionProps): Record<string, string> {
  const environment: Record<string, string> = {
    GATEWAY_CONFIG_FILE: CONFIG_FILE_NAME,
    GATEWAY_KEYS_TABLE: props.keyTable.table.tableName,
    GATEWAY_USAGE_TABLE: props.usageTable.table.tableName,
    GATEWAY_STATS_TABLE: props.statsTable.table.tableName,
    GATEWAY_METRICS_NAMESPACE: props.metricsNamespace,
    // The runtime starts through lambda/runtime-wrapper.sh: its command less --expose-gc (a faster
    // cold start), with the gateway's runtime client in place of AWS's unless runtimeClient is 'aws'.
    AWS_LAMBDA_EXEC_WRAPPER: RUNTIME_WRAPPER_PATH,
  };
  if (props.runtimeClient === 'aws') environment.GATEWAY_RUNTIME_CLIENT = 'aws';
  if (props.upstreamSecret) environment.GATEWAY_UPSTREAM_SECRET = props.upstreamSecret.secret.secretArn;
  for (const [setting, variable] of Object.entries(TUNING_ENVIRONMENT)) {
    const value = props.tuning[setting as keyof TuningConfig];
    if (value !== undefined) environment[variable] = String(value);
  }
  return environment;
}
