import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import * as z from 'zod';
import { parseJsonText } from '../lambda/config/json-text.ts';
import { parseRoutingConfig, type RoutingConfig } from '../lambda/config/routing.ts';
import type { Settings } from '../lambda/config/settings.ts';

/**
 * The deployment's settings: the `gateway` object in cdk.json's context, validated before
 * anything is synthesized so that a typo fails `cdk synth` with the field's path instead of
 * deploying a gateway that breaks at its first request.
 */
export const CONTEXT_KEY = 'gateway';

/** The Lambda maximum: streams of long agent turns can run for minutes. */
const MAX_TIMEOUT_SECONDS = 900;

/**
 * The routing config (with `identity`) travels as a file in the bundle (lib/constructs/config-file.ts),
 * so Lambda's 4 KB environment limit no longer bounds it. This bound does: should bundling fall back
 * to Docker, NodejsFunction chains every command into one `bash -c` argument, and Linux caps one
 * argument at 128 KiB (MAX_ARG_STRLEN); 64 KiB of JSON is 87,382 characters of base64, with room for
 * the esbuild command. The document is also parsed and validated at every cold start. A config this
 * large lists models one by one where a glob would do.
 */
export const MAX_ROUTING_JSON_BYTES = 64 * 1024;

/**
 * API Gateway ends a streamed response that has been silent this long on a private (or Regional)
 * endpoint: https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html
 */
export const PRIVATE_API_IDLE_TIMEOUT_MS = 300_000;

/**
 * The upstream idle timeout with the private API when tuning sets none: the gateway ends a stream
 * whose upstream went silent with an error event (lambda/upstream/relay.ts) before API Gateway's
 * idle timeout would cut it without one. Its own default, 300 s, would race API Gateway's.
 */
export const PRIVATE_API_UPSTREAM_IDLE_TIMEOUT_MS = 240_000;

/** Reserved concurrency when cdk.json sets none (see `reservedConcurrency` below for why). */
export const DEFAULT_RESERVED_CONCURRENCY = 100;

/** Headers coding agents and the SDKs send; a browser client needs them allowed by CORS. */
export const DEFAULT_CORS_HEADERS = ['authorization', 'content-type', 'x-api-key', 'anthropic-version', 'anthropic-beta'];

const LOG_RETENTION_DAYS = new Set(Object.values(RetentionDays).filter((value) => typeof value === 'number'));

const hostname = z
  .string()
  .transform((name) => name.replace(/\.$/, ''))
  .pipe(z.string().regex(/^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/, 'must be a lower-case DNS name like api.example.com'));

const CorsSchema = z.strictObject({
  allowedOrigins: z.array(z.string().min(1)).min(1, 'list at least one origin, or "*"'),
  allowedHeaders: z.array(z.string().min(1)).default(DEFAULT_CORS_HEADERS),
  maxAgeSeconds: z.int().min(0).max(86_400).default(3_600),
});

const CustomDomainSchema = z
  .strictObject({
    domainName: hostname,
    /** CloudFront only uses certificates from us-east-1, whatever region the stack is in. */
    certificateArn: z.string().regex(/^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[A-Za-z0-9-]+$/, 'must be the ARN of an ACM certificate in us-east-1 (CloudFront only uses certificates from there)'),
    hostedZoneId: z.string().regex(/^Z[A-Z0-9]{1,32}$/, 'must be a Route 53 hosted zone id like Z0123456789ABCDEFGHIJ'),
    zoneName: hostname,
    /**
     * Longest silence CloudFront accepts from the function, before the first byte and between
     * chunks. 120 s is the most the default quota allows; a model thinking longer than that
     * before its first token needs a quota increase and a higher value.
     */
    originReadTimeoutSeconds: z.int().min(1).max(3_600).default(120),
    /** Refuse requests that reach the Function URL without passing through CloudFront. */
    refuseDirectRequests: z.boolean().default(true),
  })
  .refine((domain) => domain.domainName === domain.zoneName || domain.domainName.endsWith(`.${domain.zoneName}`), {
    message: 'must be the zone name or a name inside the zone',
    path: ['domainName'],
  });

/**
 * The private REST API for Claude Code's `/login` (docs/deploy-private-api.md): API Gateway, type
 * PRIVATE, streaming to the same function, on a private custom domain reached through an
 * execute-api interface VPC endpoint, either created here (`vpcId`, `subnetIds`, `clientCidrs`) or
 * an existing one (`vpcEndpointId`).
 */
const PrivateApiSchema = z
  .strictObject({
    /** The name clients use; Claude Code pins its certificate. It must resolve to the endpoint's private addresses. */
    domainName: hostname,
    /** A private custom domain takes an ACM certificate from the stack's own Region. */
    certificateArn: z.string().regex(/^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]+$/, "must be the ARN of an ACM certificate for domainName, in the stack's Region"),
    vpcEndpointId: z.optional(z.string().regex(/^vpce-[0-9a-f]{8,17}$/, 'must be an interface VPC endpoint id like vpce-0123456789abcdef0')),
    /** The existing endpoint's regional DNS name, for the Route 53 record (with hostedZoneId). */
    vpcEndpointDnsName: z.optional(hostname),
    vpcId: z.optional(z.string().regex(/^vpc-[0-9a-f]{8,17}$/, 'must be a VPC id like vpc-0123456789abcdef0')),
    /** Subnets for the created endpoint's network interfaces; one per Availability Zone, two or more for availability. */
    subnetIds: z.optional(z.array(z.string().regex(/^subnet-[0-9a-f]{8,17}$/, 'must be a subnet id like subnet-0123456789abcdef0')).min(1)),
    /** Networks allowed to reach the created endpoint on 443: the developers' VPN or office ranges. */
    clientCidrs: z.optional(z.array(z.union([z.cidrv4(), z.cidrv6()], { error: 'must be a CIDR block like 10.0.0.0/8' })).min(1)),
    /** A private hosted zone holding domainName: the stack adds the record pointing it at the endpoint. */
    hostedZoneId: z.optional(z.string().regex(/^Z[A-Z0-9]{1,32}$/, 'must be a Route 53 hosted zone id like Z0123456789ABCDEFGHIJ')),
    /** How long API Gateway lets a stream run; absent = the function timeout. Streaming integrations allow 15 minutes. */
    integrationTimeoutSeconds: z.optional(z.int().min(1).max(900)),
    /** Keep the public Function URL beside the private API (the login helper and keys work on it). */
    functionUrl: z.boolean().default(true),
    /** API Gateway access logs; they need the account's API Gateway CloudWatch role set in this Region. */
    accessLogs: z.boolean().default(false),
  })
  .superRefine((api, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((api.vpcEndpointId === undefined) === (api.vpcId === undefined)) {
      issue('vpcId', 'set exactly one of "vpcEndpointId" (an existing execute-api endpoint) and "vpcId" (with subnetIds and clientCidrs: an endpoint created here)');
    }
    if (api.vpcId !== undefined) {
      if (api.subnetIds === undefined) issue('subnetIds', 'the endpoint created in vpcId needs the subnets for its network interfaces');
      if (api.clientCidrs === undefined) issue('clientCidrs', 'the endpoint created in vpcId needs the networks allowed to reach it');
    }
    if (api.vpcEndpointId !== undefined) {
      for (const field of ['subnetIds', 'clientCidrs'] as const) if (api[field] !== undefined) issue(field, 'belongs to an endpoint created in vpcId, not to vpcEndpointId');
      if (api.hostedZoneId !== undefined && api.vpcEndpointDnsName === undefined) issue('vpcEndpointDnsName', "the record in hostedZoneId points at the endpoint's DNS name: give it (vpce-….execute-api.<region>.vpce.amazonaws.com)");
    }
    if (api.vpcEndpointDnsName !== undefined && api.vpcEndpointId === undefined) issue('vpcEndpointDnsName', 'is for an existing vpcEndpointId; a created endpoint brings its own');
  });

/** CloudWatch alarms on the 5xx share and function throttling; absent = no alarms. */
const AlarmsSchema = z.strictObject({
  /** Notified (after confirming the subscription) when an alarm fires or clears. */
  email: z.optional(z.email('must be an email address')),
  /** Alarm when more than this share of requests is answered 5xx. */
  serverErrorPercent: z.number().min(0.1).max(100).default(5),
});

/** Optional overrides of the runtime knobs in lambda/config/settings.ts (defaults live there). */
const TuningSchema = z.strictObject({
  keyCacheSeconds: z.optional(z.int().min(0)),
  sessionCacheSeconds: z.optional(z.int().min(0)),
  maxBodyBytes: z.optional(z.int().min(1)),
  firstByteTimeoutMs: z.optional(z.int().min(1)),
  deadlineMarginMs: z.optional(z.int().min(0)),
  upstreamIdleTimeoutMs: z.optional(z.int().min(1)),
  keepaliveMs: z.optional(z.int().min(1)),
  lastUsedIntervalSeconds: z.optional(z.int().min(0)),
  /** Off (0) unless `npm run smoke` shows the Function URL holding back small writes; 1 MiB at most. */
  streamPadBytes: z.optional(z.int().min(0).max(1_048_576)),
  /** Model requests a budgeted key may have in progress at once (0: no default cap); see lambda/config/settings.ts. */
  maxInFlightPerKey: z.optional(z.int().min(0)),
  // usageFlushMs stays 0 on Lambda: an invocation must not end with usage unwritten.
} satisfies Record<Exclude<keyof Settings, 'originSecret' | 'usageFlushMs' | 'metricsNamespace'>, z.ZodType>);

const GatewayContextSchema = z
  .strictObject({
    stackName: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'must start with a letter and use letters, digits and -').default('AgentGateway'),
    /** The routing config itself, same schema as `npm start` (checked by parseRoutingConfig). */
    routing: z.optional(z.unknown()),
    /** Or the path of a JSON file holding it, relative to the project root. */
    routingFile: z.optional(z.string().min(1)),
    timeoutSeconds: z.int().min(1).max(MAX_TIMEOUT_SECONDS).default(MAX_TIMEOUT_SECONDS),
    /**
     * 256 MB: a stream holds the function for the model's whole answer, so duration is billed by
     * memory for every second of it. With a warm request at about 0.7-1.4 ms of CPU, a request that
     * arrives as an agent's turns do adds about 3 ms at 256 MB (about as much at 1,024 MB), and an
     * on-demand cold start takes about 0.14 s, for half the price of 512 MB (npm run bench;
     * docs/deployment.md, "Memory size"). Back-to-back requests on one environment add about 13 ms at 256 MB.
     */
    memoryMb: z.int().min(128).max(10_240).default(256),
    /**
     * Which Lambda runtime client serves the function: the gateway's own (lambda/runtime-client/,
     * a third less CPU per warm request) or AWS's, the managed runtime's. 'aws' is the way back
     * should a change of Lambda's ever break ours (docs/deployment.md, "The runtime client").
     */
    runtimeClient: z.enum(['gateway', 'aws']).default('gateway'),
    /**
     * Caps concurrent invocations, each open stream holding one: the Function URL is public, so
     * this bounds what any flood of requests (and a leaked key's, past its own cap of requests in
     * flight) can run up, and keeps the gateway from taking the account's whole shared pool.
     * 100: ten developers with Claude Code at full fan-out (10 subagent streams each, the default
     * cap of a key's requests in flight), 900 of the default regional quota of 1,000 left to the
     * account's other functions. AWS keeps at least 100 unreserved, so an account whose quota is
     * under 200 must set a smaller value, or null for no reservation (the account's shared pool).
     */
    reservedConcurrency: z.union([z.int().min(1), z.null()]).default(DEFAULT_RESERVED_CONCURRENCY),
    logRetentionDays: z
      .int()
      .refine((days) => LOG_RETENTION_DAYS.has(days), `must be one of ${[...LOG_RETENTION_DAYS].join(', ')}`)
      .default(RetentionDays.THREE_MONTHS),
    /** Absent = no CORS: coding agents are not browsers. */
    cors: z.optional(CorsSchema),
    /**
     * X-Ray active tracing of the function (sampled invocations, with their cold starts). Off by
     * default: the request log line already times every request, and X-Ray bills per trace.
     */
    tracing: z.boolean().default(false),
    customDomain: z.optional(CustomDomainSchema),
    privateApi: z.optional(PrivateApiSchema),
    alarms: z.optional(AlarmsSchema),
    tuning: TuningSchema.default({}),
  })
  .refine((input) => (input.routing === undefined) !== (input.routingFile === undefined), {
    message: 'set exactly one of "routing" (the config) and "routingFile" (a path to it)',
    path: ['routing'],
  })
  .refine((input) => input.customDomain === undefined || input.privateApi?.functionUrl !== false, {
    message: 'customDomain puts CloudFront in front of the Function URL: keep the Function URL, or remove customDomain',
    path: ['privateApi', 'functionUrl'],
  })
  .superRefine((input, ctx) => {
    if (input.privateApi === undefined) return;
    for (const setting of ['firstByteTimeoutMs', 'upstreamIdleTimeoutMs', 'keepaliveMs'] as const) {
      const value = input.tuning[setting];
      if (value !== undefined && value >= PRIVATE_API_IDLE_TIMEOUT_MS) {
        ctx.addIssue({ code: 'custom', path: ['tuning', setting], message: `must be under ${PRIVATE_API_IDLE_TIMEOUT_MS} with privateApi: API Gateway ends a stream silent for 5 minutes, without an error the client can read` });
      }
    }
  });

type GatewayContext = z.output<typeof GatewayContextSchema>;
/** Function URL CORS, with defaults filled. */
export type CorsConfig = z.output<typeof CorsSchema>;
/** CloudFront + Route 53 settings, with defaults filled. */
export type CustomDomainConfig = z.output<typeof CustomDomainSchema>;
/** The private REST API settings, with defaults filled. */
export type PrivateApiConfig = z.output<typeof PrivateApiSchema>;
/** Alarm settings, with defaults filled. */
export type AlarmsConfig = z.output<typeof AlarmsSchema>;
/** Runtime setting overrides; unset ones keep lambda/config/settings.ts defaults. */
export type TuningConfig = z.output<typeof TuningSchema>;

/** The validated deployment settings, with the routing config parsed. */
export interface GatewayConfig extends Omit<GatewayContext, 'routing' | 'routingFile' | 'logRetentionDays'> {
  routing: RoutingConfig;
  logRetentionDays: RetentionDays;
}

/** A problem in cdk.json's `gateway` context; the message names each field at fault. */
export class GatewayConfigError extends Error {
  override readonly name = 'GatewayConfigError';
}

/**
 * Validates the `gateway` context value. `projectRoot` anchors a relative `routingFile` (the
 * CDK CLI runs the app from the directory holding cdk.json).
 */
export function parseGatewayConfig(raw: unknown, projectRoot = process.cwd()): GatewayConfig {
  if (raw === undefined) {
    throw new GatewayConfigError(`cdk.json has no "${CONTEXT_KEY}" context; see docs/configuration.md for its fields.`);
  }
  const parsed = GatewayContextSchema.safeParse(raw);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  - ${[CONTEXT_KEY, ...issue.path].join('.')}: ${issue.message}`);
    throw new GatewayConfigError(`Invalid "${CONTEXT_KEY}" context in cdk.json:\n${lines.join('\n')}`);
  }
  const { routing, routingFile, ...options } = parsed.data;
  return { ...options, routing: loadRouting(routing, routingFile, projectRoot) };
}

function loadRouting(inline: unknown, file: string | undefined, projectRoot: string): RoutingConfig {
  const source = file === undefined ? `${CONTEXT_KEY}.routing` : resolve(projectRoot, file);
  let input = inline;
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(source, 'utf8');
    } catch (error) {
      throw new GatewayConfigError(`${CONTEXT_KEY}.routingFile: cannot read ${source}: ${(error as Error).message}`);
    }
    try {
      input = parseJsonText(text);
    } catch (error) {
      throw new GatewayConfigError(`${CONTEXT_KEY}.routingFile: ${source}: ${(error as Error).message}`);
    }
  }
  let routing: RoutingConfig;
  try {
    routing = parseRoutingConfig(input);
  } catch (error) {
    throw new GatewayConfigError(`${source}: ${(error as Error).message}`);
  }
  const bytes = Buffer.byteLength(JSON.stringify(routing));
  if (bytes > MAX_ROUTING_JSON_BYTES) {
    throw new GatewayConfigError(
      `${source}: the routing config is ${bytes} bytes as compact JSON; the stack takes at most ${MAX_ROUTING_JSON_BYTES} (64 KiB). Use globs instead of listing models one by one.`,
    );
  }
  return routing;
}
