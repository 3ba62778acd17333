import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { startStreamingFront, type Invoke } from './function-url-front.ts';

export interface RestApiFrontOptions {
  /** The private custom domain the requests are addressed to ($context.domainName). */
  domainName: string;
  stage: string;
  vpceId: string;
}

/**
 * An HTTP front that does what the private REST API of lib/constructs/private-api.ts does with a
 * request, from API Gateway's documentation:
 * - the request becomes a Lambda proxy event, payload 1.0 ("Input format of a Lambda function for
 *   proxy integration"): `httpMethod`, `path` without the stage, `resource` `/{proxy+}` (or `/`),
 *   header names as the client wrote them, `headers` with the last value of each and
 *   `multiValueHeaders` with all, the query string decoded likewise, the client's address in
 *   `requestContext.identity.sourceIp`:
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
 * - with binary media type `*\/*` every body is passed base64-encoded:
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-payload-encodings.html
 * - a streaming integration uses that same input, and its output is the Function URL's prelude
 *   format (decoded by the shared front):
 *   https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html
 * What the documentation does not give, and this front assumes: the order of values in
 * `multiValueHeaders` is the order on the wire; `requestContext.domainName` is the custom domain.
 */
export async function startRestApiFront(invoke: Invoke<APIGatewayProxyEvent>, options: RestApiFrontOptions): Promise<{ url: string; close(): Promise<void> }> {
  return startStreamingFront(invoke, (req, body) => restEvent(req, body, options));
}

function restEvent(req: http.IncomingMessage, body: Buffer, options: RestApiFrontOptions): APIGatewayProxyEvent {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const multiValueHeaders: Record<string, string[]> = {};
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    const name = req.rawHeaders[i] as string;
    (multiValueHeaders[name] ??= []).push(req.rawHeaders[i + 1] as string);
  }
  const multiValueQuery: Record<string, string[]> = {};
  for (const [name, value] of url.searchParams) (multiValueQuery[name] ??= []).push(value);
  const last = (values: Record<string, string[]>) => Object.fromEntries(Object.entries(values).map(([name, all]) => [name, all.at(-1) as string]));
  const hasQuery = Object.keys(multiValueQuery).length > 0;
  const root = url.pathname === '/';
  const now = new Date();
  const userAgent = req.headers['user-agent'] ?? null;
  return {
    resource: root ? '/' : '/{proxy+}',
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers: last(multiValueHeaders),
    multiValueHeaders,
    queryStringParameters: hasQuery ? last(multiValueQuery) : null,
    multiValueQueryStringParameters: hasQuery ? multiValueQuery : null,
    pathParameters: root ? null : { proxy: url.pathname.slice(1) },
    stageVariables: null,
    requestContext: {
      accountId: '123456789012',
      apiId: 'privateapi1',
      authorizer: undefined,
      domainName: options.domainName,
      domainPrefix: options.domainName.split('.')[0],
      extendedRequestId: randomUUID(),
      httpMethod: req.method ?? 'GET',
      identity: {
        accessKey: null,
        accountId: null,
        apiKey: null,
        apiKeyId: null,
        caller: null,
        clientCert: null,
        cognitoAuthenticationProvider: null,
        cognitoAuthenticationType: null,
        cognitoIdentityId: null,
        cognitoIdentityPoolId: null,
        principalOrgId: null,
        sourceIp: req.socket.remoteAddress ?? '',
        user: null,
        userAgent,
        userArn: null,
        vpceId: options.vpceId,
      } as APIGatewayProxyEvent['requestContext']['identity'],
      path: url.pathname,
      protocol: `HTTP/${req.httpVersion}`,
      requestId: randomUUID(),
      requestTime: now.toUTCString(),
      requestTimeEpoch: now.getTime(),
      resourceId: 'proxy1',
      resourcePath: root ? '/' : '/{proxy+}',
      stage: options.stage,
    },
    body: body.length === 0 ? null : body.toString('base64'),
    isBase64Encoded: body.length > 0,
  };
}
