import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mintKey } from '../../lambda/auth/issue-key.ts';
import { openLocalStore } from '../../bin/local/store-access.ts';
import { startDevServer, tempDir, type RunningServer } from '../support/processes.ts';
import { exchange, type Exchange, type Request } from './exchange.ts';
import { startRealRuntime, type RealRuntime } from './real-runtime.ts';

export interface BothOptions {
  routing: unknown;
  timeoutMs: number;
  /** Environment for both: tuning (GATEWAY_*) and the upstream key variables. */
  environment: Record<string, string>;
}

export interface Both {
  /** `npm start`: bin/dev-server.ts, the handler behind the local stand-in. */
  standIn: RunningServer;
  /** The production bundle under aws-lambda-ric behind the Function URL front. */
  real: RealRuntime;
  /** One key, valid on both. */
  key: string;
  /** The same request to the stand-in, then to the real runtime. */
  send(request: Request): Promise<{ standIn: Exchange; real: Exchange }>;
  close(): Promise<void>;
}

/** Both runtimes with the same routing, settings, timeout and key. */
export async function startBoth(options: BothOptions): Promise<Both> {
  const dataDir = tempDir('gateway-runtime-standin-');
  const configPath = join(dataDir, 'routing.json');
  writeFileSync(configPath, JSON.stringify(options.routing));
  const standIn = await startDevServer({
    ...options.environment,
    GATEWAY_DATA_DIR: dataDir,
    GATEWAY_CONFIG: configPath,
    GATEWAY_FUNCTION_TIMEOUT_SECONDS: String(options.timeoutMs / 1000),
  });
  let real: RealRuntime | undefined;
  try {
    real = await startRealRuntime({ routing: options.routing, timeoutMs: options.timeoutMs, environment: options.environment });
    const { key, record } = mintKey({ name: 'runtime-conformance' });
    await real.putKey(record);
    const local = await openLocalStore(dataDir);
    await local.store.put(record);
    await local.close();
    const started = real;
    return {
      standIn,
      real: started,
      key,
      async send(request) {
        const standInResult = await exchange(standIn.url, request);
        const realResult = await exchange(started.url, request);
        return { standIn: standInResult, real: realResult };
      },
      async close() {
        await standIn.stop();
        await started.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await standIn.stop();
    await real?.close();
    throw error;
  }
}
