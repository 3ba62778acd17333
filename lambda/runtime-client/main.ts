import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { RuntimeApiConnection, type ApiAnswer } from './api-connection.ts';
import { errorDocument, headerSafe } from './error-document.ts';
import { installGlobals, STREAMING } from './globals.ts';
import { InvocationResponseStream } from './response-stream.ts';

/**
 * The gateway's own Lambda runtime client: what the exec wrapper (lambda/runtime-wrapper.sh) runs
 * in place of AWS's (the managed runtime's /var/runtime/index.mjs). It loads the handler named by
 * _HANDLER from LAMBDA_TASK_ROOT, as AWS's does, and serves its invocations one at a time over the
 * Runtime API, in the streaming response mode only: the gateway's handler is a streaming one.
 * https://docs.aws.amazon.com/lambda/latest/dg/runtimes-custom.html
 *
 * Why: AWS's client costs a third of a warm request's CPU (a node:http request per response, a
 * long poll in a native thread); this one costs a socket write each way (docs/performance.md,
 * "The gateway's own runtime client"). What it leaves out, the gateway does not use: buffered
 * (non-streaming) handlers, callbacks, the console patch (the gateway writes its log lines to
 * stdout itself) and several invocations at once (the wrapper keeps AWS's client when
 * AWS_LAMBDA_MAX_CONCURRENCY is set).
 */
const API = '/2018-06-01/runtime';

type StreamingHandler = (event: unknown, stream: InvocationResponseStream, context: InvocationContext) => unknown;

export interface InvocationContext {
  awsRequestId: string;
  invokedFunctionArn: string;
  functionName: string;
  functionVersion: string;
  memoryLimitInMB: string;
  logGroupName: string;
  logStreamName: string;
  clientContext?: unknown;
  identity?: unknown;
  tenantId?: string | undefined;
  xRayTraceId?: string | undefined;
  getRemainingTimeInMillis(): number;
}

/** `module.function` (the module a path under the task root, without its extension), as AWS's client reads it. */
async function loadHandler(taskRoot: string, name: string): Promise<StreamingHandler> {
  const dot = name.lastIndexOf('.');
  if (dot <= 0) throw Object.assign(new Error(`Bad handler ${name}: expected module.function`), { name: 'Runtime.MalformedHandlerName' });
  const base = `${taskRoot}/${name.slice(0, dot)}`;
  const file = ['.mjs', '.js', '.cjs'].map((extension) => base + extension).find((path) => existsSync(path));
  if (file === undefined) throw Object.assign(new Error(`Cannot find module ${name.slice(0, dot)} in ${taskRoot}`), { name: 'Runtime.ImportModuleError' });
  const loaded = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const handler = loaded[name.slice(dot + 1)];
  if (typeof handler !== 'function') throw Object.assign(new Error(`${name} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  if ((handler as { [STREAMING]?: unknown })[STREAMING] !== 'response') {
    throw Object.assign(new Error(`${name} is not a streaming handler; this runtime client serves only those (GATEWAY_RUNTIME_CLIENT=aws runs AWS's)`), { name: 'Runtime.UnsupportedHandler' });
  }
  return handler as StreamingHandler;
}

function logError(msg: string, requestId: string | undefined, error: unknown): void {
  const { errorType, errorMessage } = errorDocument(error);
  process.stdout.write(`${JSON.stringify({ level: 'error', msg, ...(requestId ? { awsRequestId: requestId } : {}), errorType, errorMessage })}\n`);
}

function jsonHeader(value: string | undefined): unknown {
  if (value === undefined || value === '') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

export async function runRuntimeClient(env: NodeJS.ProcessEnv = process.env): Promise<never> {
  const address = env.AWS_LAMBDA_RUNTIME_API;
  const handlerName = env._HANDLER;
  const taskRoot = env.LAMBDA_TASK_ROOT;
  if (!address || !handlerName || !taskRoot) throw new Error('AWS_LAMBDA_RUNTIME_API, _HANDLER and LAMBDA_TASK_ROOT must be set (a Lambda execution environment sets them)');
  const api = new RuntimeApiConnection(address);
  installGlobals();
  let handler: StreamingHandler;
  try {
    handler = await loadHandler(taskRoot, handlerName);
  } catch (error) {
    logError('init error', undefined, error);
    const document = errorDocument(error);
    const body = JSON.stringify(document);
    await api.exchange(
      `POST ${API}/init/error HTTP/1.1\r\nHost: ${address}\r\nLambda-Runtime-Function-Error-Type: ${headerSafe(document.errorType)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    throw error;
  }
  const next = Buffer.from(`GET ${API}/invocation/next HTTP/1.1\r\nHost: ${address}\r\n\r\n`);
  // Read once: they do not change, and each read of process.env makes its string anew.
  const functionFields = {
    functionName: env.AWS_LAMBDA_FUNCTION_NAME ?? '',
    functionVersion: env.AWS_LAMBDA_FUNCTION_VERSION ?? '',
    memoryLimitInMB: env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE ?? '',
    logGroupName: env.AWS_LAMBDA_LOG_GROUP_NAME ?? '',
    logStreamName: env.AWS_LAMBDA_LOG_STREAM_NAME ?? '',
  };
  for (;;) {
    const invocation = await nextInvocation(api, next);
    if (invocation.status !== 200) throw new Error(`the Runtime API answered /invocation/next with ${invocation.status}`);
    const { headers } = invocation;
    const requestId = headers['lambda-runtime-aws-request-id'];
    const deadline = Number(headers['lambda-runtime-deadline-ms']);
    if (requestId === undefined || !Number.isFinite(deadline)) throw new Error('the Runtime API sent an invocation without its request id or deadline');
    if (headers['lambda-runtime-trace-id']) process.env._X_AMZN_TRACE_ID = headers['lambda-runtime-trace-id'];
    else delete process.env._X_AMZN_TRACE_ID;
    const context: InvocationContext = {
      ...functionFields,
      awsRequestId: requestId,
      invokedFunctionArn: headers['lambda-runtime-invoked-function-arn'] ?? '',
      clientContext: jsonHeader(headers['lambda-runtime-client-context']),
      identity: jsonHeader(headers['lambda-runtime-cognito-identity']),
      tenantId: headers['lambda-runtime-aws-tenant-id'],
      xRayTraceId: headers['lambda-runtime-trace-id'],
      getRemainingTimeInMillis: () => deadline - Date.now(),
    };
    const stream = new InvocationResponseStream(await api.socket(), address, requestId);
    await invoke(handler, invocation.body, stream, context);
    try {
      const answer = await api.answer();
      if (answer.status >= 300) logError('the Runtime API refused the response', requestId, new Error(`${answer.status} ${answer.body.toString('utf8').slice(0, 500)}`));
    } catch (error) {
      // The connection is gone; the next poll opens another.
      logError('the Runtime API did not acknowledge the response', requestId, error);
      api.close();
    }
  }
}

/**
 * Asks for the next invocation, once more on a new connection if the kept one fails: the API may
 * have closed it while the environment waited (frozen between invocations). A second failure
 * ends the process, and Lambda starts a new environment.
 */
async function nextInvocation(api: RuntimeApiConnection, request: Buffer): Promise<ApiAnswer> {
  try {
    return await api.exchange(request);
  } catch {
    api.close();
    return api.exchange(request);
  }
}

/** Runs the handler on one invocation; whatever it throws ends the response with the error trailers. */
async function invoke(handler: StreamingHandler, body: Buffer, stream: InvocationResponseStream, context: InvocationContext): Promise<void> {
  try {
    const result = handler(JSON.parse(body.toString('utf8')), stream, context);
    if (typeof (result as Promise<unknown> | undefined)?.then !== 'function') throw new Error('Streaming does not support non-async handlers.');
    await result;
    if (!stream.writableEnded) throw new Error('Response stream is not finished.');
    if (!stream.writableFinished && !stream.responseEnded) await new Promise((resolve) => stream.once('finish', resolve).once('close', resolve));
  } catch (error) {
    logError('invoke error', context.awsRequestId, error);
    stream.fail(error);
  }
}

await runRuntimeClient();
