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
 * Lambda limits all environment variables of a function to 4 KB together; the routing config
 * travels as one of them, and the table name, secret ARN and tuning values need the rest.
 */
export const MAX_ROUTING_JSON_BYTES = 3 * 1024;

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
     * 512 MB: a stream holds the function for the model's whole answer, so duration is billed by
     * memory for every second of it; at 512 MB a warm request costs the same 2-3 ms of gateway
     * time as at 1,024 MB (its CPU fits in one scheduling period's share) for half the price, and
     * a cold start stays near a third of a second (npm run bench; docs/deployment.md, "Memory size").
     */
    memoryMb: z.int().min(128).max(10_240).default(512),
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
    alarms: z.optional(AlarmsSchema),
    tuning: TuningSchema.default({}),
  })
  .refine((input) => (input.routing === undefined) !== (input.routingFile === undefined), {
    message: 'set exactly one of "routing" (the config) and "routingFile" (a path to it)',
    path: ['routing'],
  });

type GatewayContext = z.output<typeof GatewayContextSchema>;
/** Function URL CORS, with defaults filled. */
export type CorsConfig = z.output<typeof CorsSchema>;
/** CloudFront + Route 53 settings, with defaults filled. */
export type CustomDomainConfig = z.output<typeof CustomDomainSchema>;
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
      `${source}: the routing config is ${bytes} bytes as compact JSON; at most ${MAX_ROUTING_JSON_BYTES} fit in the function's environment (Lambda allows 4 KB in total). Use globs instead of listing models one by one.`,
    );
  }
  return routing;
}
