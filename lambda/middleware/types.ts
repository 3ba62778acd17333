import type { MiddlewareObj } from '@middy/core';
import type { LambdaFunctionURLEvent } from 'aws-lambda';
import type { HandlerResponse } from '../deps.ts';
import type { GatewayContext } from '../request-state.ts';

/** The one middleware shape of this gateway (types only: middy is imported at runtime by gateway.ts). */
export type GatewayMiddleware = MiddlewareObj<LambdaFunctionURLEvent, HandlerResponse, Error, GatewayContext>;
