import { createRouter, parseRoutingConfig } from '../../../lambda/config/routing.ts';

const config = {
  upstreams: {
    anthropic: { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
    local: { type: 'openai', baseUrl: 'http://127.0.0.1:9000/v1/' },
    sim: { type: 'simulator' },
  },
  routes: [
    { model: 'claude-sonnet-5', upstream: 'anthropic' },
    { model: 'claude-*', upstream: 'anthropic' },
    { model: 'team-fast', upstream: 'local', upstreamModel: 'qwen3-coder' },
    { model: 'gpt-?.?', upstream: 'local' },
    { model: '*', upstream: 'sim' },
  ],
};

describe('routing config', () => {
  const router = createRouter(parseRoutingConfig(config));

  test('first matching route wins, with the optional rename', () => {
    expect(router.select('claude-opus-4-8')).toMatchObject({ targets: [{ upstream: { name: 'anthropic' }, upstreamModel: 'claude-opus-4-8', weight: 1 }], fallbacks: [] });
    expect(router.select('team-fast')).toMatchObject({ targets: [{ upstream: { name: 'local', baseUrl: 'http://127.0.0.1:9000/v1' }, upstreamModel: 'qwen3-coder' }] });
    expect(router.select('gpt-5.5')?.targets[0]?.upstream.name).toBe('local');
    expect(router.select('gpt-5.55')?.targets[0]?.upstream.name).toBe('sim');
  });

  test('default base addresses, and only concrete ids are listed', () => {
    expect(router.upstreams.get('anthropic')?.baseUrl).toBe('https://api.anthropic.com');
    expect(router.modelIds).toEqual(['claude-sonnet-5', 'team-fast']);
  });

  test('regex characters in globs are literal', () => {
    const strict = createRouter(parseRoutingConfig({ upstreams: { s: { type: 'simulator' } }, routes: [{ model: 'a.b+*', upstream: 's' }] }));
    expect(strict.select('a.b+c')).toBeDefined();
    expect(strict.select('axb+c')).toBeUndefined();
  });

  test.each([
    [{ upstreams: {}, routes: [] }, 'routes'],
    [{ upstreams: { a: { type: 'vertex' } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a.type'],
    [{ upstreams: { a: { type: 'openai', baseUrl: 'ftp://x' } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a.baseUrl'],
    [{ upstreams: { a: { type: 'openai', apiKeyEnv: 'not a name' } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a.apiKeyEnv'],
    [{ upstreams: { a: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'b' }] }, 'routes'],
    [{ upstreams: { a: { type: 'simulator', extra: 1 } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a'],
  ])('a bad config names the field at fault (%#)', (bad, field) => {
    expect(() => parseRoutingConfig(bad)).toThrow(new RegExp(`- ${field.replace('.', '\\.')}`));
  });
});

describe('targets, fallbacks and credentials', () => {
  const upstreams = {
    ant: { type: 'anthropic', apiKeyEnv: ['ANT_KEY_1', 'ANT_KEY_2'] },
    br: { type: 'bedrock', region: 'us-east-1' },
    mantle: { type: 'openai', baseUrl: 'https://bedrock-mantle.us-west-2.api.aws/v1', aws: { service: 'bedrock-mantle', region: 'us-west-2' } },
    oai: { type: 'openai', apiKeyEnv: 'OPENAI_API_KEY' },
  };

  test('weighted primaries and ordered fallbacks, each with its own model name', () => {
    const router = createRouter(
      parseRoutingConfig({
        upstreams,
        routes: [
          { model: 'claude-*', targets: [{ upstream: 'ant', weight: 3 }, { upstream: 'br', upstreamModel: 'us.anthropic.claude-sonnet-5-v1:0' }], fallbacks: [{ upstream: 'oai', upstreamModel: 'gpt-5.5' }] },
        ],
      }),
    );
    expect(router.select('claude-sonnet-5')).toMatchObject({
      targets: [
        { upstream: { name: 'ant' }, upstreamModel: 'claude-sonnet-5', weight: 3 },
        { upstream: { name: 'br' }, upstreamModel: 'us.anthropic.claude-sonnet-5-v1:0', weight: 1 },
      ],
      fallbacks: [{ upstream: { name: 'oai' }, upstreamModel: 'gpt-5.5' }],
    });
  });

  test('keys as a list; Bedrock signed for its region by default; any upstream may sign with SigV4', () => {
    const router = createRouter(parseRoutingConfig({ upstreams, routes: [{ model: '*', upstream: 'ant' }] }));
    expect(router.upstreams.get('ant')).toMatchObject({ apiKeyEnvs: ['ANT_KEY_1', 'ANT_KEY_2'], aws: undefined });
    expect(router.upstreams.get('br')).toMatchObject({ baseUrl: 'https://bedrock-runtime.us-east-1.amazonaws.com', apiKeyEnvs: [], aws: { service: 'bedrock', region: 'us-east-1' } });
    expect(router.upstreams.get('mantle')).toMatchObject({ aws: { service: 'bedrock-mantle', region: 'us-west-2' }, apiKeyEnvs: [] });
    expect(router.upstreams.get('oai')?.apiKeyEnvs).toEqual(['OPENAI_API_KEY']);
    // A Bedrock API key (bearer) instead of SigV4.
    const keyed = createRouter(parseRoutingConfig({ upstreams: { br: { type: 'bedrock', region: 'eu-west-1', apiKeyEnv: 'AWS_BEARER_TOKEN_BEDROCK' } }, routes: [{ model: '*', upstream: 'br' }] }));
    expect(keyed.upstreams.get('br')).toMatchObject({ aws: undefined, apiKeyEnvs: ['AWS_BEARER_TOKEN_BEDROCK'] });
    // The Region given only in an explicit signing block is Bedrock Runtime's Region too.
    const signed = createRouter(parseRoutingConfig({ upstreams: { br: { type: 'bedrock', aws: { service: 'bedrock', region: 'eu-central-1' } } }, routes: [{ model: '*', upstream: 'br' }] }));
    expect(signed.upstreams.get('br')).toMatchObject({ baseUrl: 'https://bedrock-runtime.eu-central-1.amazonaws.com', aws: { service: 'bedrock', region: 'eu-central-1' } });
  });

  test('every mistake is named, each at its field', () => {
    let message = '';
    try {
      parseRoutingConfig({
        upstreams: { ...upstreams, bad: { type: 'bedrock' }, both: { type: 'openai', apiKeyEnv: 'K', aws: { service: 'x', region: 'us-east-1' } } },
        routes: [
          { model: 'a', upstream: 'ant', fallbacks: [{ upstream: 'nope' }, { upstream: 'ant' }] },
          { model: 'b', targets: [{ upstream: 'ant', weight: 0 }, { upstream: 'br', weight: -2 }] },
          { model: 'c' },
          { model: 'd', upstream: 'ant', targets: [{ upstream: 'br' }] },
        ],
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('- upstreams.bad.region: a bedrock upstream needs its AWS region');
    expect(message).toContain('- upstreams.both: give "aws" (SigV4) or "apiKeyEnv" (API keys), not both');
    expect(message).toContain('- routes.0.fallbacks.0.upstream: unknown upstream "nope"');
    expect(message).toContain('- routes.0.fallbacks.1: fallback ant/a repeats an earlier target of this route (a fallback cycle)');
    expect(message).toContain('- routes.1.targets.0.weight: weight must be a number above 0');
    expect(message).toContain('- routes.1.targets.1.weight: weight must be a number above 0');
    expect(message).toContain('- routes.2: give either "upstream" or "targets"');
    expect(message).toContain('- routes.3: give either "upstream" or "targets"');
  });

  test('a Bedrock Region given twice must be the same: calls would go to one Region and be signed (and granted) for the other', () => {
    const bedrock = (upstream: Record<string, unknown>) => ({ upstreams: { br: { type: 'bedrock', ...upstream } }, routes: [{ model: 'claude', upstream: 'br', upstreamModel: 'anthropic.claude-haiku-4-5-20251001-v1:0' }] });
    expect(() => parseRoutingConfig(bedrock({ region: 'us-east-1', aws: { service: 'bedrock', region: 'eu-west-1' } }))).toThrow('- upstreams.br.region: "region" (us-east-1) and "aws.region" (eu-west-1) differ: requests would go to one Region and be signed for the other; give the Region once');
    const same = createRouter(parseRoutingConfig(bedrock({ region: 'eu-west-1', aws: { service: 'bedrock', region: 'eu-west-1' } })));
    expect(same.upstreams.get('br')).toMatchObject({ baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com', aws: { service: 'bedrock', region: 'eu-west-1' } });
  });

  test('"anyModel" widens the IAM grant of an upstream signed for Bedrock: an upstream with API keys has none to widen', () => {
    const keyed = { upstreams: { br: { type: 'bedrock', region: 'us-east-1', apiKeyEnv: 'AWS_BEARER_TOKEN_BEDROCK', anyModel: true } }, routes: [{ model: 'claude-*', upstream: 'br' }] };
    expect(() => parseRoutingConfig(keyed)).toThrow('- upstreams.br.anyModel: only upstreams signed for Bedrock take "anyModel"');
    expect(() => parseRoutingConfig({ ...keyed, upstreams: { br: { type: 'bedrock', region: 'us-east-1', anyModel: true } } })).not.toThrow();
  });

  test('an upstream name is looked up among the config\'s own upstreams only (not "toString", "constructor"...)', () => {
    for (const name of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      expect(() => parseRoutingConfig({ upstreams: { sim: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'sim', fallbacks: [{ upstream: name }] }] })).toThrow(`- routes.0.fallbacks.0.upstream: unknown upstream "${name}" (defined: sim)`);
    }
  });

  test('a mistyped field does not hide the other mistakes, and each is said in words', () => {
    const problems = () => {
      try {
        parseRoutingConfig({
          upstreams: { ant: { type: 'anthropic', apiKeyEnv: 5, baseUrl: 'ftp://x' }, odd: { type: 'vertex' } },
          routes: [
            { model: 'a', targets: [{ upstream: 'ant', weight: 'heavy' }, { upstream: 'ant', weight: -1, upstreamModel: 'b' }], fallbacks: [{ upstream: 'nope' }, { upstream: 'ant', upstreamModel: 'b' }] },
            { model: 'c', upstream: 'ant', fallbacks: 'ant' },
          ],
          prices: { 'x*': { inputPerMTok: -1 } },
        });
      } catch (error) {
        return (error as Error).message.split('\n');
      }
      throw new Error('accepted');
    };
    expect(problems()).toEqual([
      'Invalid routing config:',
      '  - upstreams.ant.baseUrl: must be an http:// or https:// URL',
      '  - upstreams.ant.apiKeyEnv: must be an environment variable name, or a list of them',
      '  - upstreams.odd.type: must be one of "anthropic", "openai", "openai-chat", "bedrock", "simulator"',
      '  - routes.0.targets.0.weight: must be a number',
      '  - routes.1.fallbacks: must be an array',
      '  - prices.x*.inputPerMTok: must be at least 0',
      '  - prices.x*.outputPerMTok: required',
      '  - routes.0.targets.1.weight: weight must be a number above 0',
      '  - routes.0.fallbacks.0.upstream: unknown upstream "nope" (defined: ant, odd)',
      '  - routes.0.fallbacks.1: fallback ant/b repeats an earlier target of this route (a fallback cycle)',
    ]);
  });
});
