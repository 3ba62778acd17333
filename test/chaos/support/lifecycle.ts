import { chaosConfig, ChaosGateway } from './gateway.ts';
import { startProviders, type Providers } from './providers.ts';

export interface ChaosSetup {
  readonly gateway: ChaosGateway;
  readonly providers: Providers;
}

/**
 * The setup most chaos files share: scripted loopback providers and one `npm start` process on
 * `chaosConfig`, started once per file, stopped after it, and started again before a test when
 * an earlier one stopped it (a test that killed the server must not fail the next ones).
 */
export function useChaosGateway(): ChaosSetup {
  let providers: Providers | undefined;
  let gateway: ChaosGateway | undefined;
  beforeAll(async () => {
    providers = await startProviders();
    gateway = await ChaosGateway.start({ config: chaosConfig({ anthropic: providers.anthropic.url, openai: providers.openai.url }) });
  });
  afterAll(async () => {
    await gateway?.stop();
    await providers?.close();
  });
  beforeEach(() => gateway!.ensureRunning());
  return {
    get gateway() {
      return gateway!;
    },
    get providers() {
      return providers!;
    },
  };
}
