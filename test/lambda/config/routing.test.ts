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
    expect(router.select('claude-opus-4-8')).toMatchObject({ upstream: { name: 'anthropic' }, upstreamModel: 'claude-opus-4-8' });
    expect(router.select('team-fast')).toMatchObject({ upstream: { name: 'local', baseUrl: 'http://127.0.0.1:9000/v1' }, upstreamModel: 'qwen3-coder' });
    expect(router.select('gpt-5.5')?.upstream.name).toBe('local');
    expect(router.select('gpt-5.55')?.upstream.name).toBe('sim');
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
    [{ upstreams: { a: { type: 'bedrock' } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a.type'],
    [{ upstreams: { a: { type: 'openai', baseUrl: 'ftp://x' } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a.baseUrl'],
    [{ upstreams: { a: { type: 'openai', apiKeyEnv: 'not a name' } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a.apiKeyEnv'],
    [{ upstreams: { a: { type: 'simulator' } }, routes: [{ model: '*', upstream: 'b' }] }, 'routes'],
    [{ upstreams: { a: { type: 'simulator', extra: 1 } }, routes: [{ model: '*', upstream: 'a' }] }, 'upstreams.a'],
  ])('a bad config names the field at fault (%#)', (bad, field) => {
    expect(() => parseRoutingConfig(bad)).toThrow(new RegExp(`- ${field.replace('.', '\\.')}`));
  });
});
