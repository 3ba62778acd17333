import { readdirSync, readFileSync } from 'node:fs';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import { DynamoKeyStore } from '../../lambda/auth/key-store.ts';
import { ensureKeyTable, ensureStatsTable, ensureUsageTable, localDynamo, startEmbeddedStore, type EmbeddedStore } from '../../bin/local/embedded-store.ts';
// The real-runtime harness of test/runtime (a loopback Runtime API with Lambda's bootstrap, AWS's
// runtime interface client, a Function URL front) and its SigV4-checking Secrets Manager fake, reused.
import { buildRic } from '../../test/runtime/build-ric.ts';
import { startFunctionUrlFront } from '../../test/runtime/function-url-front.ts';
import { startLambdaEnvironment, type LambdaEnvironment } from '../../test/runtime/lambda-environment.ts';
import { FUNCTION_ROLE_CREDENTIALS } from '../../test/runtime/real-runtime.ts';
import type { Invocation } from '../../test/runtime/runtime-api.ts';
import { startAwsJsonFake, type AwsJsonFake } from '../../test/support/aws-json-fake.ts';
import { RUNTIME_WRAPPER_PATH } from '../../lib/bundle-files.ts';
import type { Launch } from '../bundle.ts';
import { startChild, type BenchChild } from '../processes.ts';
import { benchRoutingConfig } from '../workloads.ts';
import { startLoopbackTls, type LoopbackTls } from './loopback-tls.ts';

/**
 * The gateway as deployed, on loopback: the production bundle started as Lambda starts it (the
 * bootstrap runs the function's exec wrapper, which runs the gateway's runtime client, or AWS's
 * aws-lambda-ric, built once by test/runtime/build-ric.ts, with GATEWAY_RUNTIME_CLIENT=aws in the
 * function's environment) behind a Function URL front, reading its key from DynamoDB (dynalite),
 * its upstream keys from Secrets Manager (a fake that checks the SigV4 signature) and calling the
 * benchmark's upstream stub, all three over HTTPS (loopback-tls.ts). Each `startFunction` is a
 * new execution environment: its first request is a cold start (process start, runtime client,
 * handler import, key lookup, secret read, upstream call), the next ones are warm.
 */
export interface Deployment {
  /** A key issued in the function's key table. */
  key: string;
  stub: BenchChild;
  /** `environment` adds variables (NODE_OPTIONS=--cpu-prof to see where a cold start goes). */
  startFunction(options: { memoryMb: number; launch: Launch | undefined; environment?: Record<string, string>; onInitDone?: () => void }): Promise<FunctionUnderTest>;
  close(): Promise<void>;
}

export interface FunctionUnderTest {
  /** The Function URL front. */
  url: URL;
  /** Every invocation, in order (takenAt, finishedAt and releasedAt time it). */
  invocations: Invocation[];
  lambda: LambdaEnvironment;
  /** CPU time of the runtime process so far (all its threads), µs; NaN when it is not running. */
  cpuUs(): number;
  /** Peak resident memory of the runtime process (VmHWM), bytes. */
  peakRssBytes(): number;
  /** Resident memory of the runtime process now (VmRSS), bytes. */
  rssBytes(): number;
  /** Resolves once the function has logged `count` request lines (its work after each response is done). */
  logged(count: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const TIMEOUT_MS = 120_000;
const BENCH_SESSION_TOKEN = `IQoJb3JpZ2luX2Vj${Buffer.alloc(756, 0x5a).toString('base64')}`;
const TABLES = { keys: 'gateway-keys', usage: 'gateway-usage', stats: 'gateway-stats' };
const SECRET_ID = 'gateway/upstreams';

export async function startDeployment(taskRoot: string): Promise<Deployment> {
  const { entry: ricEntry } = buildRic();
  const parts: { close(): Promise<void> }[] = [];
  try {
    const tls: LoopbackTls = await startLoopbackTls();
    parts.push(tls);
    const store: EmbeddedStore = await startEmbeddedStore(undefined);
    parts.push(store);
    const dynamo = localDynamo(store.endpoint);
    await ensureKeyTable(dynamo, TABLES.keys);
    await ensureUsageTable(dynamo, TABLES.usage);
    await ensureStatsTable(dynamo, TABLES.stats);
    const minted = mintKey({ name: 'bench-lambda' });
    await new DynamoKeyStore(TABLES.keys, dynamo).put(minted.record);

    const stub = await startChild('stub-server.ts', {});
    parts.push({ close: () => stub.stop() });
    const upstreamOrigin = await tls.front(stub.url.origin);
    // As deployed with provider keys: every upstream has one, kept in the upstream secret.
    const routing = benchRoutingConfig(upstreamOrigin) as { upstreams: Record<string, Record<string, unknown>> };
    for (const upstream of Object.values(routing.upstreams)) upstream.apiKeyEnv = 'BENCH_UPSTREAM_KEY';
    const secretValue = JSON.stringify(Object.fromEntries(Object.keys(routing.upstreams).map((name) => [name, 'sk-bench'])));
    const secrets: AwsJsonFake = await startAwsJsonFake({
      service: 'secretsmanager',
      targetPrefix: 'secretsmanager',
      credentials: [FUNCTION_ROLE_CREDENTIALS],
      handlers: { GetSecretValue: () => ({ output: { Name: SECRET_ID, SecretString: secretValue } }) },
    });
    parts.push(secrets);
    const environment = {
      GATEWAY_CONFIG_JSON: JSON.stringify(routing),
      GATEWAY_KEYS_TABLE: TABLES.keys,
      GATEWAY_USAGE_TABLE: TABLES.usage,
      // Each request also puts its usage event (BENCH_ROLLUPS=off leaves it out, to measure what it costs).
      ...(process.env.BENCH_ROLLUPS === 'off' ? {} : { GATEWAY_STATS_TABLE: TABLES.stats }),
      GATEWAY_UPSTREAM_SECRET: SECRET_ID,
      AWS_ACCESS_KEY_ID: FUNCTION_ROLE_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: FUNCTION_ROLE_CREDENTIALS.secretAccessKey,
      // The role's session token rides on every AWS call (a header, and signed): STS gives it no
      // fixed size (https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html);
      // a role session's runs to several hundred characters and more, so the benchmark's is a kilobyte.
      AWS_SESSION_TOKEN: BENCH_SESSION_TOKEN,
      // Any other AWS endpoint is a dead loopback port: nothing leaves the machine.
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
      AWS_ENDPOINT_URL_DYNAMODB: await tls.front(store.endpoint),
      AWS_ENDPOINT_URL_SECRETSMANAGER: await tls.front(secrets.url),
      AWS_EC2_METADATA_DISABLED: 'true',
      // As the stack sets it (lib/constructs/gateway-function.ts): the runtime starts through its wrapper.
      AWS_LAMBDA_EXEC_WRAPPER: RUNTIME_WRAPPER_PATH,
      NODE_EXTRA_CA_CERTS: tls.caFile,
    };

    return {
      key: minted.key,
      stub,
      async startFunction({ memoryMb, launch, environment: extra = {}, onInitDone }) {
        const lambda = await startLambdaEnvironment({ ricEntry, taskRoot, handler: 'index.handler', timeoutMs: TIMEOUT_MS, memoryMb, environment: { ...environment, ...extra }, ...(launch ? { launch } : {}), ...(onInitDone ? { onInitDone } : {}) });
        const invocations: FunctionUnderTest['invocations'] = [];
        const front = await startFunctionUrlFront((event) => {
          const invocation = lambda.invoke(event);
          invocations.push(invocation);
          return invocation;
        });
        const pid = () => lambda.starts.at(-1)?.pid;
        return {
          url: new URL(front.url),
          invocations,
          lambda,
          cpuUs: () => processCpuUs(pid()),
          peakRssBytes: () => statusBytes(pid(), 'VmHWM'),
          rssBytes: () => statusBytes(pid(), 'VmRSS'),
          async logged(count, timeoutMs = 30_000) {
            const until = Date.now() + timeoutMs;
            while (lambda.stdout.filter((line) => line.includes('"msg":"request"')).length < count) {
              if (Date.now() > until) throw new Error(`the function logged fewer than ${count} request lines in ${timeoutMs} ms; stderr: ${lambda.stderr.slice(-5).join('\n')}`);
              await new Promise((resolve) => setTimeout(resolve, 5));
            }
          },
          async close() {
            await front.close();
            await lambda.close();
          },
        };
      },
      async close() {
        for (const part of parts.reverse()) await part.close();
      },
    };
  } catch (error) {
    for (const part of parts.reverse()) await part.close().catch(() => {});
    throw error;
  }
}

/** Time on CPU of every thread of `pid`, from /proc/<pid>/task/<tid>/schedstat (nanoseconds, not clock ticks). */
function processCpuUs(pid: number | undefined): number {
  if (pid === undefined) return Number.NaN;
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    return ns / 1000;
  } catch {
    return Number.NaN;
  }
}

/** A memory figure of /proc/<pid>/status (VmHWM: peak resident, VmRSS: resident now), bytes. */
function statusBytes(pid: number | undefined, field: 'VmHWM' | 'VmRSS'): number {
  if (pid === undefined) return Number.NaN;
  try {
    const kib = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? Number.NaN : Number(kib) * 1024;
  } catch {
    return Number.NaN;
  }
}
