import middy from '@middy/core';
import { executionModeStreamifyResponse } from '@middy/core/StreamifyResponse';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import { KeyCache } from './auth/key-cache.ts';
import type { GatewayDeps, HandlerResponse } from './deps.ts';
import { dispatch } from './handlers/dispatch.ts';
import { authenticate } from './middleware/authenticate.ts';
import { enforceLimits } from './middleware/enforce-limits.ts';
import { errorResponse } from './middleware/error-response.ts';
import { parseBody } from './middleware/parse-body.ts';
import { requestContext } from './middleware/request-context.ts';
import { requestLogLine } from './observability/request-log.ts';
import { stateOf, type GatewayContext } from './request-state.ts';
import { chargeableUsage, isMetered } from './usage/metering.ts';

/**
 * The gateway as a streaming Lambda handler: request context -> key -> body -> limits -> route;
 * usage is metered when the response has ended.
 * Built from explicit dependencies, so tests and the local server run exactly this pipeline.
 */
export function createGateway(deps: GatewayDeps) {
  const cache = new KeyCache(deps.settings.keyCacheSeconds);
  return middy<LambdaFunctionURLEvent, HandlerResponse, Error, GatewayContext>({
    executionMode: executionModeStreamifyResponse,
    // The gateway keeps its own deadline (it must also bound the streaming phase).
    timeoutEarlyInMillis: 0,
    // Runs after the body has been fully streamed (or abandoned): finish pending writes, then log.
    async requestEnd(request) {
      const state = (request.context as Partial<GatewayContext>).gateway;
      if (!state) return;
      for (const release of state.release) release();
      if (deps.usage && isMetered(state)) {
        const { usage, estimated } = chargeableUsage(state);
        if (estimated) state.usageEstimated = true;
        state.usage = usage;
        state.pending.push(
          deps.usage.record(state.key?.id as string, state.model as string, usage, new Date()).catch((error: unknown) => {
            state.usageRecordFailed = error instanceof Error ? error.message : String(error);
          }),
        );
      }
      await Promise.allSettled(state.pending);
      deps.log(requestLogLine(state, Date.now()));
    },
  })
    .use(requestContext(deps.settings))
    .use(authenticate(deps, cache))
    .use(parseBody(deps.settings))
    .use(enforceLimits(deps))
    .use(errorResponse())
    .handler((event, context) => dispatch(event, stateOf(context), deps));
}
