import { QueryDefinition, QueryString, type ILogGroup, type QueryStringProps } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/**
 * Saved Logs Insights queries over the request log line: spend per key is read from the logs
 * (where the key id is) rather than from metrics, whose dimensions leave the key out on
 * purpose. `CostMicroUsd` and `PriceSource` are members of the line's EMF record
 * (lambda/observability/metrics.ts); `keyId`, `usage`, `model`... are the line's own fields.
 */
/** Dollars per line, before aggregating (micro-dollars keep the counters exact). */
const DOLLARS = 'CostMicroUsd / 1000000 as costUsd';

export const LOG_QUERIES = {
  'spend-per-key': {
    fields: [DOLLARS],
    filterStatements: ['msg = "request"', 'ispresent(keyId)'],
    statsStatements: [
      'count(*) as requests, sum(costUsd) as usd, sum(usage.inputTokens) as inputTokens, sum(usage.outputTokens) as outputTokens, ' +
        'sum(usage.cacheReadTokens) as cacheReadTokens, sum(usage.cacheWriteTokens) as cacheWriteTokens by keyId, Model',
    ],
    sort: 'usd desc',
  },
  'top-keys-by-spend': {
    fields: [DOLLARS],
    filterStatements: ['msg = "request"', 'ispresent(keyId)'],
    statsStatements: ['sum(costUsd) as usd, count(*) as requests by keyId'],
    sort: 'usd desc',
    limit: 20,
  },
  'unpriced-models': {
    fields: [DOLLARS],
    filterStatements: ['msg = "request"', 'PriceSource = "fallback"'],
    statsStatements: ['count(*) as requests, sum(costUsd) as usdAtFallbackPrice by model, upstream, upstreamModel'],
    sort: 'requests desc',
  },
} as const satisfies Record<string, QueryStringProps>;

export type LogQueryName = keyof typeof LOG_QUERIES;

/** The query text as the console and `aws logs start-query` take it. */
export function logQuery(name: LogQueryName): string {
  return new QueryString(LOG_QUERIES[name]).toString();
}

export interface LogQueriesProps {
  logGroup: ILogGroup;
  /** Prefix of the saved queries' names (the stack name), so two gateways stay apart. */
  prefix: string;
}

/** One `AWS::Logs::QueryDefinition` per query, scoped to the gateway's log group. */
export class LogQueries extends Construct {
  constructor(scope: Construct, id: string, props: LogQueriesProps) {
    super(scope, id);
    for (const name of Object.keys(LOG_QUERIES) as LogQueryName[]) {
      new QueryDefinition(this, name, {
        queryDefinitionName: `${props.prefix}/${name}`,
        queryString: new QueryString(LOG_QUERIES[name]),
        logGroups: [props.logGroup],
      });
    }
  }
}
