import http from 'node:http';
import { listen } from './gateway-harness.ts';
import { verifySignature } from './sigv4-verify.ts';

export const JSON_FAKE_CREDENTIALS = { accessKeyId: 'AKIAFAKEJSON00000001', secretAccessKey: 'fake-json-secret/0123456789abcdef' };

/** What an operation handler returns: an output, or a service error by name. */
export type JsonAnswer = { output: unknown } | { status: number; error: string; message: string };

export interface AwsJsonFake {
  url: string;
  /** Every request that reached a handler (signature verified), in order. */
  calls: { operation: string; input: Record<string, unknown> }[];
  /** Requests refused for their signature. */
  refused: number;
  close(): Promise<void>;
}

/**
 * A loopback AWS service speaking the JSON protocol (Secrets Manager, DynamoDB...): it refuses any
 * request whose SigV4 signature does not verify for its service and region (with its own
 * implementation, test/support/sigv4-verify.ts), routes `x-amz-target` to a handler, and answers
 * errors as the services do: `__type` and `message` in a JSON body.
 */
export async function startAwsJsonFake(options: {
  service: string;
  targetPrefix: string;
  region?: string;
  /** The credentials it accepts (default JSON_FAKE_CREDENTIALS). */
  credentials?: { accessKeyId: string; secretAccessKey: string }[];
  handlers: Record<string, (input: Record<string, unknown>) => JsonAnswer>;
}): Promise<AwsJsonFake> {
  const region = options.region ?? 'us-east-1';
  const secrets = new Map((options.credentials ?? [JSON_FAKE_CREDENTIALS]).map((credential) => [credential.accessKeyId, credential.secretAccessKey]));
  const fake = { calls: [] as AwsJsonFake['calls'], refused: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, { 'content-type': String(req.headers['content-type'] ?? 'application/x-amz-json-1.1'), 'x-amzn-requestid': 'fake' });
        res.end(JSON.stringify(payload));
      };
      const problem = verifySignature(req, body, secrets, { region, service: options.service });
      if (problem) {
        fake.refused++;
        return send(problem.status, { __type: problem.type, message: problem.message });
      }
      const [prefix, operation = ''] = String(req.headers['x-amz-target'] ?? '').split('.');
      const handler = prefix === options.targetPrefix ? options.handlers[operation] : undefined;
      if (!handler) return send(400, { __type: 'UnknownOperationException', message: `No operation ${String(req.headers['x-amz-target'])}` });
      const input = JSON.parse(body.toString('utf8') || '{}') as Record<string, unknown>;
      fake.calls.push({ operation, input });
      const answer = handler(input);
      if ('output' in answer) send(200, answer.output);
      else send(answer.status, { __type: `com.amazonaws.fake#${answer.error}`, message: answer.message });
    });
  });
  const url = await listen(server);
  return {
    url,
    get calls() {
      return fake.calls;
    },
    get refused() {
      return fake.refused;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
