import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { KeyCache } from './auth/key-cache.ts';
import type { GatewayDeps, HandlerResponse } from './deps.ts';
import { bodyTooLarge, GatewayError, toGatewayError } from './errors.ts';
import { dispatch } from './handlers/dispatch.ts';
import { authenticate } from './middleware/authenticate.ts';
import { enforceLimits } from './middleware/enforce-limits.ts';
import { errorResponse } from './middleware/error-response.ts';
import { parseBody } from './middleware/parse-body.ts';
import { requestContext } from './middleware/request-context.ts';
import type { GatewayMiddleware } from './middleware/types.ts';
import { requestLogLine } from './observability/request-log.ts';
import { responseEnded, stateOf, type GatewayContext, type Preflight, type RequestState } from './request-state.ts';
import { chargeableUsage, isMetered, requestCost } from './usage/metering.ts';
import { usageEventOf } from './usage/usage-event.ts';

type Request = Parameters<NonNullable<GatewayMiddleware['before']>>[0];

/**
 * The gateway as a streaming Lambda handler: request context -> key -> body -> limits -> route;
 * usage is metered when the response has ended.
 * Built from explicit dependencies, so tests and the local server run exactly this pipeline.
 *
 * `preflight` runs the checks that need only the request line and headers (route, origin, key)
 * without running the request: a runtime that receives bodies itself (the local server) uses it to
 * refuse an unauthenticated upload before reading a byte of it, and to learn how much body the
 * request may bring (on the open routes none, or a sign-in form's few KB). Lambda receives the
 * whole request in its event and never calls it.
 */
export function createGateway(deps: GatewayDeps) {
  const cache = new KeyCache(deps.settings.keyCacheSeconds);
  const configuredModels = new Set(deps.router.modelIds);
  const context = requestContext(deps.settings, { identity: deps.identity !== undefined, admin: deps.admin !== undefined });
  const keyCheck = authenticate(deps, cache);
  // Who the preflight found behind an event (npm start): the handler's run of that same event
  // takes it over instead of hashing and looking up the credential a second time.
  const checked = new WeakMap<LambdaFunctionURLEvent, Pick<RequestState, 'key' | 'policy'> & { principal: NonNullable<RequestState['principal']> }>();
  const auth: GatewayMiddleware = {
    async before(request) {
      const found = checked.get(request.event);
      if (found === undefined) return keyCheck.before?.(request);
      checked.delete(request.event);
      const state = stateOf(request.context);
      state.principal = found.principal;
      if (found.key !== undefined) state.key = found.key;
      if (found.policy !== undefined) state.policy = found.policy;
    },
  };
  const handler = middy<LambdaFunctionURLEvent, HandlerResponse, Error, GatewayContext>({
    executionMode: executionModeStreamifyResponse,
    // The gateway keeps its own deadline (it must also bound the streaming phase).
    timeoutEarlyInMillis: 0,
    // Runs after the body has been fully streamed (or abandoned): finish pending writes, then log.
    async requestEnd(request) {
      const state = (request.context as Partial<GatewayContext>).gateway;
      if (!state) return;
      state.respondedAt = Date.now();
      responseEnded(state);
      let recorded: Promise<unknown> = Promise.resolve();
      if (deps.usage && isMetered(state)) {
        const { usage, estimated } = chargeableUsage(state);
        if (estimated) state.usageEstimated = true;
        state.usage = usage;
        const cost = requestCost(usage, state, deps.prices);
        state.priceSource = cost.source;
        state.costMicroUsd = cost.costMicroUsd;
        recorded = deps.usage.record(usageEventOf(state, new Date(), configuredModels)).then(
          () => (state.usageWriteMs = Date.now() - (state.respondedAt as number)),
          (error: unknown) => {
            state.usageRecordFailed = error instanceof Error ? error.message : String(error);
          },
        );
        state.pending.push(recorded);
      }
      // The key's slot for requests in flight is given back once this request's usage counts, so
      // the budget check of the request that takes the slot next sees it. A failed release only
      // leaves the lease to expire.
      const release = state.releaseLease;
      if (release) state.pending.push(recorded.then(release).catch(() => undefined));
      // A client gone while a complete non-streamed answer was still being written (the
      // upstream's usage is whole, so it was metered as is above) is logged as the client's
      // hang-up, not as ok. A stream has set its outcome itself (relay.ts): ok once its terminal
      // event was handed over.
      if (state.outcome === undefined && state.abandon?.aborted) state.outcome = String(state.abandon.reason);
      await Promise.allSettled(state.pending);
      deps.log(requestLogLine(state, deps.settings.metricsNamespace));
    },
  })
    .use(context)
    .use(auth)
    .use(parseBody(deps.settings))
    .use(enforceLimits(deps))
    .use(errorResponse())
    .handler((event, context) => dispatch(event, stateOf(context), deps));

  return Object.assign(handler, {
    async preflight(event: LambdaFunctionURLEvent): Promise<Preflight> {
      // The event's request id: the handler's run of this event opens its state under the same one.
      const request = { event, context: { awsRequestId: event.requestContext.requestId } as GatewayContext, response: undefined, error: undefined, internal: {} } as unknown as Request;
      try {
        await context.before?.(request);
        await keyCheck.before?.(request);
        // Past the credential check without a principal: an open route. It takes the body its
        // route allows (a sign-in form's few KB), else none; an authenticated one, the body limit.
        const state = request.context.gateway;
        const authenticated = state.principal !== undefined;
        if (state.principal !== undefined) checked.set(event, { key: state.key, principal: state.principal, policy: state.policy });
        const limit = state.route?.maxBodyBytes;
        const refusal = smallBodyOnly(event, limit);
        return { ...(refusal ? { refusal } : {}), authenticated, maxBodyBytes: limit ?? (authenticated ? deps.settings.maxBodyBytes : 0) };
      } catch (error) {
        return { refusal: toGatewayError(error), authenticated: false, maxBodyBytes: 0 };
      } finally {
        // The key check may have asked for a `lastUsedAt` stamp: it is written now, and nothing outlives the call.
        const state = request.context.gateway;
        if (state) {
          responseEnded(state);
          await Promise.allSettled(state.pending);
        }
      }
    },
  });
}

/**
 * Routes that take only a small body (the unauthenticated sign-in forms) are refused before it is
 * read: one larger than their allowance, or one of unannounced length (browsers and OAuth clients
 * always send Content-Length). A request with no body passes.
 */
function smallBodyOnly(event: LambdaFunctionURLEvent, limit: number | undefined): GatewayError | undefined {
  if (limit === undefined) return undefined;
  const announced = event.headers['content-length'];
  if (announced === undefined) return event.headers['transfer-encoding'] === undefined ? undefined : new GatewayError('length_required', 'Send the request body with a Content-Length.');
  const size = Number(announced);
  return Number.isFinite(size) && size <= limit ? undefined : bodyTooLarge(size, limit);
}
