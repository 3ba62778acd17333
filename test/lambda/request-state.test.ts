import { forgetTry, type RequestState } from '../../lambda/request-state.ts';

test('forgetting a try clears everything a try writes (outputBytes included) and nothing of the request', () => {
  const request = (): RequestState => ({ id: 'req_1', startedAt: 1, method: 'POST', path: '/first/v1/messages', family: 'messages', deadline: 2, model: 'claude-sonnet-5', stickyKey: 's', attempts: [{ upstream: 'ant', status: 529, ms: 3 }], cappedOutputTokens: 100, pending: [], release: [], afterResponse: [] });
  const state: RequestState = { ...request(), upstream: 'ant', upstreamModel: 'claude-sonnet-5', status: 529, firstByteAt: 5, usage: { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 }, outputBytes: 40, outcome: 'upstream_error', dropped: ['metadata'] };
  forgetTry(state);
  expect(state).toEqual(request());
});
