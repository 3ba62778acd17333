import type { APIGatewayProxyEvent, LambdaFunctionURLEvent } from 'aws-lambda';

/**
 * The gateway reads Function URL events (payload format 2.0). The private REST API (API Gateway,
 * lib/constructs/private-api.ts) invokes the same function with REST proxy events (payload 1.0):
 * `httpMethod` and `path` at the top, headers in `headers` / `multiValueHeaders` as the client
 * spelled them, the client address in `requestContext.identity.sourceIp`. With response streaming
 * both reach the handler through `awslambda.streamifyResponse` and answer with the same prelude
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html),
 * so only the event needs translating, here at the edge.
 */
export interface RestEventOptions {
  /**
   * The private API's custom domain: the event's `domainName` (the origin sign-in names in its
   * metadata and redirects), whichever name the request came in on.
   */
  domainName?: string;
  /**
   * Headers set on every REST event over what the client sent. A REST event can only come from
   * API Gateway (the function's resource policy), whose own resource policy admitted the request.
   */
  vouchedHeaders?: Record<string, string>;
}

/** A REST API proxy event: `httpMethod` at the top, and not a 2.0 payload. */
export function isRestEvent(event: unknown): event is APIGatewayProxyEvent {
  if (typeof event !== 'object' || event === null) return false;
  const fields = event as { httpMethod?: unknown; version?: unknown };
  return typeof fields.httpMethod === 'string' && fields.version !== '2.0';
}

/**
 * The Function URL event a REST proxy event stands for: the path without the stage (REST events
 * carry it in `path`; `requestContext.path` has the stage in front), header names lower-cased and
 * repeated values joined with commas, cookies split out into `cookies`, the query string rebuilt
 * from its decoded values, the client address, the body as API Gateway passed it.
 */
export function restToFunctionUrlEvent(event: APIGatewayProxyEvent, options: RestEventOptions = {}): LambdaFunctionURLEvent {
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  for (const [name, values] of headerEntries(event)) {
    const lower = name.toLowerCase();
    if (lower === '') continue;
    if (lower === 'cookie') {
      cookies.push(...values.flatMap((value) => value.split(/;\s*/)).filter((cookie) => cookie !== ''));
      continue;
    }
    const joined = values.join(',');
    headers[lower] = headers[lower] === undefined ? joined : `${headers[lower]},${joined}`;
  }
  Object.assign(headers, options.vouchedHeaders);

  const query = queryEntries(event);
  const context = event.requestContext;
  const domainName = options.domainName ?? context.domainName ?? headers.host ?? '';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: event.path,
    rawQueryString: query.flatMap(([name, values]) => values.map((value) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)).join('&'),
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(query.length > 0 ? { queryStringParameters: Object.fromEntries(query.map(([name, values]) => [name, values.join(',')])) } : {}),
    requestContext: {
      accountId: context.accountId,
      apiId: context.apiId,
      domainName,
      domainPrefix: domainName.split('.')[0] ?? '',
      http: {
        method: event.httpMethod,
        path: event.path,
        protocol: context.protocol ?? 'HTTP/1.1',
        sourceIp: context.identity?.sourceIp ?? '',
        userAgent: headers['user-agent'] ?? context.identity?.userAgent ?? '',
      },
      requestId: context.requestId,
      routeKey: '$default',
      stage: context.stage,
      time: context.requestTime ?? '',
      timeEpoch: context.requestTimeEpoch ?? 0,
    },
    ...(event.body === null || event.body === undefined ? {} : { body: event.body }),
    isBase64Encoded: event.isBase64Encoded === true,
  };
}

/**
 * `handler`, taking REST events too. Everything the handler carries comes along: the streaming
 * marks `awslambda.streamifyResponse` put on it (symbol-keyed; the runtime reads them to hand over
 * the response stream) and the gateway's `preflight` (npm start's local server calls it).
 */
export function acceptRestEvents<H extends (event: never, ...rest: never[]) => unknown>(handler: H, options: RestEventOptions): H {
  const call = handler as unknown as (event: unknown, ...rest: unknown[]) => unknown;
  const adapted = (event: unknown, ...rest: unknown[]) => call(isRestEvent(event) ? restToFunctionUrlEvent(event, options) : event, ...rest);
  // Symbols whether enumerable or not (the runtime assigns its marks, npm start's stand-in defines them).
  for (const symbol of Object.getOwnPropertySymbols(handler)) Object.defineProperty(adapted, symbol, Object.getOwnPropertyDescriptor(handler, symbol) as PropertyDescriptor);
  return Object.assign(adapted, handler) as unknown as H;
}

/** Every header with all its values: `multiValueHeaders` has them all; `headers` only adds what it lacks. */
function headerEntries(event: APIGatewayProxyEvent): [string, string[]][] {
  const entries: [string, string[]][] = Object.entries(event.multiValueHeaders ?? {}).map(([name, values]) => [name, (values ?? []).map(String)]);
  const seen = new Set(entries.map(([name]) => name.toLowerCase()));
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined && !seen.has(name.toLowerCase())) entries.push([name, [value]]);
  }
  return entries;
}

/** Query parameters with all their values, decoded as API Gateway passes them. */
function queryEntries(event: APIGatewayProxyEvent): [string, string[]][] {
  const entries: [string, string[]][] = Object.entries(event.multiValueQueryStringParameters ?? {}).map(([name, values]) => [name, (values ?? []).map(String)]);
  const seen = new Set(entries.map(([name]) => name));
  for (const [name, value] of Object.entries(event.queryStringParameters ?? {})) {
    if (value !== undefined && !seen.has(name)) entries.push([name, [value]]);
  }
  return entries;
}
