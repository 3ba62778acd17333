import type { RoutingConfig } from '../../lambda/config/routing.ts';

/** Model ids listed by default, so `GET /v1/models` (and Claude Code's discovery) has names. */
const CLAUDE_MODELS = ['claude-opus-4-8', 'claude-sonnet-5', 'claude-haiku-4-5-20251001'];
const OPENAI_MODELS = ['gpt-5.5'];

/**
 * The config `npm start` uses when GATEWAY_CONFIG names no file: real providers for the
 * provider keys present in the environment, and the built-in simulator when there are none.
 */
export function defaultRoutingConfig(env: NodeJS.ProcessEnv): { config: RoutingConfig; notice: string } {
  const anthropic = Boolean(env.ANTHROPIC_API_KEY);
  const openai = Boolean(env.OPENAI_API_KEY);
  const config: RoutingConfig = { upstreams: { simulator: { type: 'simulator' } }, routes: [] };
  if (anthropic) config.upstreams.anthropic = { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' };
  if (openai) config.upstreams.openai = { type: 'openai', apiKeyEnv: 'OPENAI_API_KEY' };
  const claude = anthropic ? 'anthropic' : 'simulator';
  const gpt = openai ? 'openai' : 'simulator';
  for (const model of CLAUDE_MODELS) config.routes.push({ model, upstream: claude });
  for (const model of OPENAI_MODELS) config.routes.push({ model, upstream: gpt });
  if (anthropic) config.routes.push({ model: 'claude-*', upstream: 'anthropic' });
  if (openai) config.routes.push({ model: 'gpt-*', upstream: 'openai' }, { model: 'o*', upstream: 'openai' });
  if (!anthropic && !openai) {
    config.routes.push({ model: '*', upstream: 'simulator' });
    return { config, notice: 'No ANTHROPIC_API_KEY or OPENAI_API_KEY set: every model is answered by the built-in simulator.' };
  }
  const routed = [anthropic && 'claude-* -> Anthropic', openai && 'gpt-*, o* -> OpenAI'].filter(Boolean).join('; ');
  return { config, notice: `Default routes: ${routed}. Other models are not routed.` };
}
