import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GatewayConfigError, MAX_ROUTING_JSON_BYTES, parseGatewayConfig } from '../../lib/config.ts';
import { CUSTOM_DOMAIN, DEFAULT_GATEWAY, PRIVATE_API, PRIVATE_API_EXISTING_ENDPOINT } from './synth.ts';

const ROUTING = { upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim' }] };

/** The error message parseGatewayConfig throws for `raw`, or a failure if it accepts it. */
function rejection(raw: unknown, projectRoot?: string): string {
  try {
    parseGatewayConfig(raw, projectRoot);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayConfigError);
    return (error as Error).message;
  }
  throw new Error('the config was accepted');
}

describe('parseGatewayConfig', () => {
  test("accepts cdk.json's gateway context and fills the defaults", () => {
    const config = parseGatewayConfig({ routing: ROUTING });
    expect(config).toEqual({
      stackName: 'AgentGateway',
      routing: ROUTING,
      timeoutSeconds: 900,
      memoryMb: 256,
      runtimeClient: 'gateway',
      reservedConcurrency: 100,
      logRetentionDays: 90,
      cors: undefined,
      tracing: false,
      customDomain: undefined,
      tuning: {},
    });
    expect(parseGatewayConfig(DEFAULT_GATEWAY).routing.routes.length).toBeGreaterThan(0);
  });

  test('reads the routing config from the file routingFile names, relative to the project root', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
    try {
      writeFileSync(join(dir, 'routing.json'), JSON.stringify(ROUTING));
      expect(parseGatewayConfig({ routingFile: 'routing.json' }, dir).routing).toEqual(ROUTING);
      writeFileSync(join(dir, 'broken.json'), '{\n  "upstreams": {}\n  "routes": []\n}\n');
      expect(rejection({ routingFile: 'broken.json' }, dir)).toMatch(/^gateway\.routingFile: .*broken\.json: not valid JSON at line 3, column 3: Expected ',' or '}' after property value\n {2}3 \|   "routes": \[\]\n {4}\| {3}\^$/);
      expect(rejection({ routingFile: 'missing.json' }, dir)).toMatch(/^gateway\.routingFile: cannot read .*missing\.json: ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('names each wrong routing field, using the runtime parser', () => {
    const message = rejection({
      routing: { upstreams: { main: { type: 'anthropic', apiKeyEnv: 'not a name' } }, routes: [{ model: 'claude-*', upstream: 'missing' }] },
    });
    expect(message).toContain('gateway.routing');
    expect(message).toContain('upstreams.main.apiKeyEnv: must be an environment variable name');
    expect(message).toContain('routes.0.upstream: unknown upstream "missing" (defined: main)');
    // Fallback rules too: the stack refuses what the gateway would refuse at its first request.
    const fallbacks = rejection({
      routing: { upstreams: { main: { type: 'anthropic' } }, routes: [{ model: 'claude-*', targets: [{ upstream: 'main', weight: 0 }], fallbacks: [{ upstream: 'main' }, { upstream: 'gone' }] }] },
    });
    expect(fallbacks).toContain('routes.0.targets.0.weight: weight must be a number above 0');
    expect(fallbacks).toContain('routes.0.fallbacks.0: fallback main/claude-* repeats an earlier target of this route (a fallback cycle)');
    expect(fallbacks).toContain('routes.0.fallbacks.1.upstream: unknown upstream "gone" (defined: main)');
  });

  test('requires exactly one of routing and routingFile', () => {
    expect(rejection({})).toContain('gateway.routing: set exactly one of "routing"');
    expect(rejection({ routing: ROUTING, routingFile: 'routing.json' })).toContain('gateway.routing: set exactly one');
  });

  test('names each wrong stack option', () => {
    const message = rejection({ routing: ROUTING, timeoutSeconds: 901, memoryMb: 64, reservedConcurrency: 0, logRetentionDays: 31, stackName: '1st' });
    for (const field of ['timeoutSeconds', 'memoryMb', 'reservedConcurrency', 'logRetentionDays', 'stackName']) {
      expect(message).toContain(`gateway.${field}:`);
    }
  });

  test('rejects unknown fields, so a typo cannot be silently ignored', () => {
    expect(rejection({ routing: ROUTING, memorySize: 2048 })).toMatch(/gateway: Unrecognized key.*memorySize/);
    expect(rejection({ routing: ROUTING, tuning: { keyCacheSecs: 5 } })).toMatch(/gateway\.tuning: Unrecognized key.*keyCacheSecs/);
  });

  test('stream padding is off unless set, and at most 1 MiB', () => {
    expect(parseGatewayConfig({ routing: ROUTING }).tuning.streamPadBytes).toBeUndefined();
    expect(parseGatewayConfig({ routing: ROUTING, tuning: { streamPadBytes: 16_384 } }).tuning.streamPadBytes).toBe(16_384);
    expect(rejection({ routing: ROUTING, tuning: { streamPadBytes: 2 * 1024 * 1024 } })).toContain('gateway.tuning.streamPadBytes:');
  });

  test('validates CORS and fills its defaults', () => {
    expect(parseGatewayConfig({ routing: ROUTING, cors: { allowedOrigins: ['https://app.example.com'] } }).cors).toEqual({
      allowedOrigins: ['https://app.example.com'],
      allowedHeaders: ['authorization', 'content-type', 'x-api-key', 'anthropic-version', 'anthropic-beta'],
      maxAgeSeconds: 3600,
    });
    expect(rejection({ routing: ROUTING, cors: { allowedOrigins: [] } })).toContain('gateway.cors.allowedOrigins: list at least one origin');
  });

  test('validates the custom domain: us-east-1 certificate, a name inside the zone', () => {
    const config = parseGatewayConfig({ routing: ROUTING, customDomain: { ...CUSTOM_DOMAIN, zoneName: 'example.com.' } });
    expect(config.customDomain).toEqual({ ...CUSTOM_DOMAIN, originReadTimeoutSeconds: 120, refuseDirectRequests: true });

    const wrongRegion = CUSTOM_DOMAIN.certificateArn.replace('us-east-1', 'eu-west-1');
    expect(rejection({ routing: ROUTING, customDomain: { ...CUSTOM_DOMAIN, certificateArn: wrongRegion } })).toContain(
      'gateway.customDomain.certificateArn: must be the ARN of an ACM certificate in us-east-1',
    );
    expect(rejection({ routing: ROUTING, customDomain: { ...CUSTOM_DOMAIN, domainName: 'ai.example.org' } })).toContain(
      'gateway.customDomain.domainName: must be the zone name or a name inside the zone',
    );
    expect(rejection({ routing: ROUTING, customDomain: { ...CUSTOM_DOMAIN, hostedZoneId: 'example.com' } })).toContain('gateway.customDomain.hostedZoneId:');
  });

  test('validates the alarms and fills their defaults', () => {
    expect(parseGatewayConfig({ routing: ROUTING }).alarms).toBeUndefined();
    expect(parseGatewayConfig({ routing: ROUTING, alarms: {} }).alarms).toEqual({ serverErrorPercent: 5 });
    expect(parseGatewayConfig({ routing: ROUTING, alarms: { email: 'ops@example.com', serverErrorPercent: 2 } }).alarms).toEqual({ email: 'ops@example.com', serverErrorPercent: 2 });
    expect(rejection({ routing: ROUTING, alarms: { email: 'ops' } })).toContain('gateway.alarms.email: must be an email address');
    expect(rejection({ routing: ROUTING, alarms: { serverErrorPercent: 0 } })).toContain('gateway.alarms.serverErrorPercent:');
    expect(rejection({ routing: ROUTING, alarms: { sms: '+1' } })).toMatch(/gateway\.alarms: Unrecognized key.*sms/);
  });

  test('takes a routing config beyond what the environment held (it travels as a file), up to 64 KiB', () => {
    const routesOf = (count: number) => Array.from({ length: count }, (_, i) => ({ model: `a-rather-long-model-name-number-${i}`, upstream: 'sim' }));
    // Over 4 KB: sign-in's policies and managed settings make configs this size.
    const large = { upstreams: ROUTING.upstreams, routes: routesOf(100) };
    expect(Buffer.byteLength(JSON.stringify(large))).toBeGreaterThan(4 * 1024);
    expect(parseGatewayConfig({ routing: large }).routing).toEqual(large);
    const message = rejection({ routing: { upstreams: ROUTING.upstreams, routes: routesOf(1_500) } });
    expect(MAX_ROUTING_JSON_BYTES).toBe(64 * 1024);
    expect(message).toContain(`the stack takes at most ${MAX_ROUTING_JSON_BYTES}`);
    expect(message).toContain('gateway.routing');
  });

  test('validates the private API: exactly one endpoint source, what each needs, and fills the defaults', () => {
    expect(parseGatewayConfig({ routing: ROUTING, privateApi: PRIVATE_API }).privateApi).toEqual({ ...PRIVATE_API, functionUrl: true, accessLogs: false });
    expect(parseGatewayConfig({ routing: ROUTING, privateApi: PRIVATE_API_EXISTING_ENDPOINT }).privateApi).toMatchObject(PRIVATE_API_EXISTING_ENDPOINT);
    const { vpcId: _vpc, subnetIds: _subnets, clientCidrs: _cidrs, ...noEndpoint } = PRIVATE_API;
    expect(rejection({ routing: ROUTING, privateApi: noEndpoint })).toContain('gateway.privateApi.vpcId: set exactly one of "vpcEndpointId"');
    expect(rejection({ routing: ROUTING, privateApi: { ...PRIVATE_API, vpcEndpointId: 'vpce-0a1b2c3d4e5f60718' } })).toContain('gateway.privateApi.vpcId: set exactly one');
    expect(rejection({ routing: ROUTING, privateApi: { ...noEndpoint, vpcId: PRIVATE_API.vpcId } })).toMatch(/privateApi\.subnetIds: .*subnets[\s\S]*privateApi\.clientCidrs: /);
    expect(rejection({ routing: ROUTING, privateApi: { ...PRIVATE_API_EXISTING_ENDPOINT, vpcEndpointDnsName: undefined } })).toContain('gateway.privateApi.vpcEndpointDnsName: the record in hostedZoneId');
    expect(rejection({ routing: ROUTING, privateApi: { ...PRIVATE_API_EXISTING_ENDPOINT, clientCidrs: ['10.0.0.0/8'] } })).toContain('gateway.privateApi.clientCidrs: belongs to an endpoint created in vpcId');
    expect(rejection({ routing: ROUTING, privateApi: { ...PRIVATE_API, vpcEndpointDnsName: PRIVATE_API_EXISTING_ENDPOINT.vpcEndpointDnsName } })).toContain('gateway.privateApi.vpcEndpointDnsName: is for an existing vpcEndpointId');
  });

  test('names each malformed private API field', () => {
    const message = rejection({
      routing: ROUTING,
      privateApi: { ...PRIVATE_API, domainName: 'GW', certificateArn: 'arn:aws:iam::123456789012:role/x', vpcId: 'vpc-1', subnetIds: ['sub-1'], clientCidrs: ['10.0.0.0'], hostedZoneId: 'zone', integrationTimeoutSeconds: 901 },
    });
    for (const field of ['domainName', 'certificateArn', 'vpcId', 'subnetIds.0', 'clientCidrs.0', 'hostedZoneId', 'integrationTimeoutSeconds']) expect(message).toContain(`gateway.privateApi.${field}:`);
    expect(rejection({ routing: ROUTING, privateApi: { ...PRIVATE_API, domain: 'x' } })).toMatch(/gateway\.privateApi: Unrecognized key.*domain/);
  });

  test("with the private API, no silence the gateway allows may reach API Gateway's 5-minute idle timeout", () => {
    const message = rejection({ routing: ROUTING, privateApi: PRIVATE_API, tuning: { firstByteTimeoutMs: 300_000, upstreamIdleTimeoutMs: 300_000, keepaliveMs: 600_000 } });
    for (const setting of ['firstByteTimeoutMs', 'upstreamIdleTimeoutMs', 'keepaliveMs']) expect(message).toContain(`gateway.tuning.${setting}: must be under 300000 with privateApi`);
    expect(parseGatewayConfig({ routing: ROUTING, privateApi: PRIVATE_API, tuning: { upstreamIdleTimeoutMs: 299_000 } }).tuning.upstreamIdleTimeoutMs).toBe(299_000);
    // Without the private API, the Function URL has no such timeout.
    expect(parseGatewayConfig({ routing: ROUTING, tuning: { upstreamIdleTimeoutMs: 600_000 } }).tuning.upstreamIdleTimeoutMs).toBe(600_000);
  });

  test('refuses a custom domain without the Function URL it fronts', () => {
    expect(rejection({ routing: ROUTING, customDomain: CUSTOM_DOMAIN, privateApi: { ...PRIVATE_API, functionUrl: false } })).toContain('gateway.privateApi.functionUrl: customDomain puts CloudFront in front of the Function URL');
    expect(parseGatewayConfig({ routing: ROUTING, customDomain: CUSTOM_DOMAIN, privateApi: PRIVATE_API }).privateApi?.functionUrl).toBe(true);
  });

  test('explains a missing gateway context', () => {
    expect(rejection(undefined)).toContain('cdk.json has no "gateway" context');
  });
});
