import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEvent, LambdaFunctionURLEvent } from 'aws-lambda';
import { acceptRestEvents, isRestEvent, restToFunctionUrlEvent } from '../../lambda/runtime-event.ts';

/** The REST proxy event of API Gateway's documentation (test/fixtures/aws-events/README.md). */
const DOCS_SAMPLE: APIGatewayProxyEvent = JSON.parse(readFileSync(new URL('../fixtures/aws-events/rest-proxy-docs-sample.json', import.meta.url), 'utf8'));

/** The same request as a private API in front of the gateway sends it: its custom domain, a VPC address. */
function privateApiEvent(changes: Partial<APIGatewayProxyEvent> = {}): APIGatewayProxyEvent {
  return {
    ...DOCS_SAMPLE,
    path: '/first/v1/messages',
    pathParameters: { proxy: 'first/v1/messages' },
    headers: { Host: 'gw.corp.example.com', 'Content-Type': 'application/json' },
    multiValueHeaders: { Host: ['gw.corp.example.com'], 'Content-Type': ['application/json'] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    requestContext: {
      ...DOCS_SAMPLE.requestContext,
      stage: 'live',
      path: '/first/v1/messages',
      domainName: 'gw.corp.example.com',
      protocol: 'HTTP/1.1',
      requestTime: '26/Nov/2026:15:02:16 +0000',
      requestTimeEpoch: 1_795_705_336_000,
      identity: { ...DOCS_SAMPLE.requestContext.identity, sourceIp: '10.20.30.40' },
    },
    body: Buffer.from('{"model":"claude-sonnet-5"}').toString('base64'),
    isBase64Encoded: true,
    ...changes,
  };
}

describe('restToFunctionUrlEvent', () => {
  test("turns the documentation's REST event into the Function URL event of the same request", () => {
    const event = restToFunctionUrlEvent(DOCS_SAMPLE);
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      // POST /testStage/hello/world arrives with the stage left out of `path`.
      rawPath: '/hello/world',
      rawQueryString: 'name=me&multivalueName=you&multivalueName=me',
      queryStringParameters: { name: 'me', multivalueName: 'you,me' },
      body: '{\r\n\t"a": 1\r\n}',
      isBase64Encoded: false,
      requestContext: {
        accountId: '12345678912',
        apiId: 'gy415nuibc',
        // No domainName in this sample: the Host the request named.
        domainName: 'gy415nuibc.execute-api.us-east-1.amazonaws.com',
        domainPrefix: 'gy415nuibc',
        http: { method: 'POST', path: '/hello/world', protocol: 'HTTP/1.1', sourceIp: '192.168.196.186', userAgent: 'PostmanRuntime/2.4.5' },
        requestId: 'deef4878-7910-11e6-8f14-25afc3e9ae33',
        stage: 'testStage',
      },
    });
    expect(event.headers).toEqual({
      accept: '*/*',
      'accept-encoding': 'gzip, deflate',
      'cache-control': 'no-cache',
      'cloudfront-forwarded-proto': 'https',
      'cloudfront-is-desktop-viewer': 'true',
      'cloudfront-is-mobile-viewer': 'false',
      'cloudfront-is-smarttv-viewer': 'false',
      'cloudfront-is-tablet-viewer': 'false',
      'cloudfront-viewer-country': 'US',
      'content-type': 'application/json',
      headername: 'headerValue',
      host: 'gy415nuibc.execute-api.us-east-1.amazonaws.com',
      'postman-token': '9f583ef0-ed83-4a38-aef3-eb9ce3f7a57f',
      'user-agent': 'PostmanRuntime/2.4.5',
      via: '1.1 d98420743a69852491bbdea73f7680bd.cloudfront.net (CloudFront)',
      'x-amz-cf-id': 'pn-PWIJc6thYnZm5P0NMgOUglL1DYtl0gdeJky8tqsg8iS_sgsKD1A==',
      'x-forwarded-for': '54.240.196.186, 54.182.214.83',
      'x-forwarded-port': '443',
      'x-forwarded-proto': 'https',
    });
    expect(event.cookies).toBeUndefined();
  });

  test('a private API request: the configured custom domain, the VPC address, the body byte for byte', () => {
    const event = restToFunctionUrlEvent(privateApiEvent({ requestContext: { ...privateApiEvent().requestContext, domainName: 'abc123.execute-api.eu-west-1.amazonaws.com' } }), { domainName: 'gw.corp.example.com' });
    expect(event).toMatchObject({
      rawPath: '/first/v1/messages',
      rawQueryString: '',
      body: Buffer.from('{"model":"claude-sonnet-5"}').toString('base64'),
      isBase64Encoded: true,
      requestContext: { domainName: 'gw.corp.example.com', domainPrefix: 'gw', stage: 'live', time: '26/Nov/2026:15:02:16 +0000', timeEpoch: 1_795_705_336_000, http: { sourceIp: '10.20.30.40' } },
    });
    expect(event.queryStringParameters).toBeUndefined();
    // Without a configured name, the one API Gateway reports.
    expect(restToFunctionUrlEvent(privateApiEvent()).requestContext.domainName).toBe('gw.corp.example.com');
  });

  test('cookies go to `cookies`, as a Function URL passes them, and repeated headers join whatever their case', () => {
    const event = restToFunctionUrlEvent(
      privateApiEvent({
        headers: { Cookie: 'c=3', Accept: 'y' },
        multiValueHeaders: { Cookie: ['__Host-gw_csrf=a; gw_login=b', 'c=3'], Accept: ['text/html'], accept: ['y'] },
      }),
    );
    expect(event.cookies).toEqual(['__Host-gw_csrf=a', 'gw_login=b', 'c=3']);
    expect(event.headers).toEqual({ accept: 'text/html,y' });
  });

  test('headers and query parameters that only the single-value maps carry are kept', () => {
    const event = restToFunctionUrlEvent(
      privateApiEvent({ headers: { Authorization: 'Bearer gwt_x' }, multiValueHeaders: {}, queryStringParameters: { client_version: '0.171.0', q: 'a b&c' }, multiValueQueryStringParameters: null, body: null, isBase64Encoded: false }),
    );
    expect(event.headers).toEqual({ authorization: 'Bearer gwt_x' });
    expect(event.queryStringParameters).toEqual({ client_version: '0.171.0', q: 'a b&c' });
    expect(new URLSearchParams(event.rawQueryString).get('q')).toBe('a b&c');
    expect(event.body).toBeUndefined();
  });

  test('vouched headers replace what the client sent', () => {
    const event = restToFunctionUrlEvent(privateApiEvent({ multiValueHeaders: { 'X-Origin-Verify': ['guess'] }, headers: {} }), { vouchedHeaders: { 'x-origin-verify': 'the-secret' } });
    expect(event.headers['x-origin-verify']).toBe('the-secret');
  });
});

describe('isRestEvent', () => {
  test('tells REST events from Function URL events and anything else', () => {
    expect(isRestEvent(DOCS_SAMPLE)).toBe(true);
    expect(isRestEvent(restToFunctionUrlEvent(DOCS_SAMPLE))).toBe(false);
    expect(isRestEvent({ version: '2.0', httpMethod: 'GET' })).toBe(false);
    for (const other of [undefined, null, 'GET', {}, { httpMethod: 1 }]) expect(isRestEvent(other)).toBe(false);
  });
});

describe('acceptRestEvents', () => {
  const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');
  const HIGH_WATER_MARK = Symbol.for('aws.lambda.runtime.handler.streaming.highWaterMark');
  const seen: unknown[] = [];
  // The runtime assigns its marks; npm start's stand-in defines them (not enumerable).
  const inner = Object.assign(async (event: LambdaFunctionURLEvent, stream: string) => void seen.push([event, stream]), {
    [HIGH_WATER_MARK]: 16_384,
    preflight: async () => undefined,
  });
  Object.defineProperty(inner, STREAMING, { value: 'response' });
  const handler = acceptRestEvents(inner, { domainName: 'gw.corp.example.com' });

  test('keeps what the runtime and the local server read on the handler', () => {
    expect((handler as unknown as Record<symbol, unknown>)[STREAMING]).toBe('response');
    expect((handler as unknown as Record<symbol, unknown>)[HIGH_WATER_MARK]).toBe(16_384);
    expect(handler.preflight).toBe(inner.preflight);
  });

  test('passes Function URL events through untouched and translates REST events', async () => {
    const functionUrlEvent = restToFunctionUrlEvent(DOCS_SAMPLE);
    seen.length = 0;
    await handler(functionUrlEvent, 'stream');
    await handler(privateApiEvent() as unknown as LambdaFunctionURLEvent, 'stream');
    expect(seen[0]).toEqual([functionUrlEvent, 'stream']);
    expect((seen[0] as unknown[])[0]).toBe(functionUrlEvent);
    expect(seen[1]).toEqual([restToFunctionUrlEvent(privateApiEvent(), { domainName: 'gw.corp.example.com' }), 'stream']);
  });
});
