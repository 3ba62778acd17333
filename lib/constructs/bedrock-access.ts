import { Aws } from 'aws-cdk-lib';
import { isGlob } from '../../lambda/config/glob.ts';
import { createRouter, type RoutingConfig } from '../../lambda/config/routing.ts';

/** One IAM statement the function's role needs, as plain data (tested as such). */
export interface AccessStatement {
  sid: string;
  actions: string[];
  resources: string[];
  conditions?: Record<string, Record<string, string | string[]>>;
}

export interface BedrockAccess {
  statements: AccessStatement[];
  /** Grants wider than the config's model ids, each said at synth. */
  warnings: string[];
  /** Routing the stack cannot grant (synth stops). */
  errors: string[];
}

const INVOKE = ['bedrock:InvokeModel', 'bedrock:InvokeModelWithResponseStream'];
/** System-defined cross-Region profiles: `us.anthropic.claude-...`; `global.` routes to any commercial Region. */
const PROFILE = /^(us|eu|apac|jp|au|ca|us-gov|global)\.(.+)$/;

/**
 * Exactly what the routing config invokes on Amazon Bedrock, as IAM statements
 * (https://docs.aws.amazon.com/bedrock/latest/userguide/cross-region-inference-prereq.html):
 * - a foundation model id: that model in the upstream's Region (+ CountTokens);
 * - a cross-Region inference profile: the profile in the upstream's Region, and its foundation
 *   model in every Region the profile may route to, only when called through that profile; a
 *   `global.` profile also needs the Region-less foundation-model ARN;
 * - an application inference profile ARN: that ARN (its models: see the warning);
 * - `bedrock-mantle` upstreams: inference on the account's Mantle projects in their Region (as
 *   AWS's AmazonBedrockMantleInferenceAccess policy grants it,
 *   https://docs.aws.amazon.com/aws-managed-policy/latest/reference/AmazonBedrockMantleInferenceAccess.html).
 * Any upstream signed for service `bedrock` counts, whatever its type: a `bedrock` upstream, or
 * an `openai`/`anthropic` one on Bedrock Runtime's OpenAI-compatible or Messages endpoints.
 * A route that passes the client's model name through (a glob without `upstreamModel`) names no
 * model: it needs `"anyModel": true` on its upstream, which grants every model and profile in
 * the Region and is said at synth.
 */
export function bedrockAccess(routing: RoutingConfig): BedrockAccess {
  const access: BedrockAccess = { statements: [], warnings: [], errors: [] };
  // The upstreams as the gateway compiles them: granted exactly the service and Region it signs for.
  const { upstreams } = createRouter(routing);
  const models = new Map<string, Set<string>>();
  for (const [index, route] of routing.routes.entries()) {
    const targets = [...(route.targets ?? (route.upstream ? [{ upstream: route.upstream, upstreamModel: route.upstreamModel }] : [])), ...(route.fallbacks ?? [])];
    for (const target of targets) {
      if (upstreams.get(target.upstream)?.aws?.service !== 'bedrock') continue;
      const modelId = target.upstreamModel ?? (isGlob(route.model) ? undefined : route.model);
      if (modelId !== undefined) (models.get(target.upstream) ?? models.set(target.upstream, new Set()).get(target.upstream))?.add(modelId);
      else if (routing.upstreams[target.upstream]?.anyModel !== true) {
        access.errors.push(`routes.${index}: "${route.model}" reaches Bedrock upstream "${target.upstream}" with the client's model name, so the stack cannot name the models to allow: give the route an upstreamModel, or set "anyModel": true on the upstream`);
      }
    }
  }
  for (const [name, { aws }] of upstreams) {
    if (aws === undefined) continue;
    const { service, region } = aws;
    if (service === 'bedrock') {
      if (routing.upstreams[name]?.anyModel === true) anyModelStatements(access, name, region);
      else for (const modelId of models.get(name) ?? []) modelStatements(access, name, region, modelId);
    } else if (service === 'bedrock-mantle') {
      access.statements.push({ sid: sid('Mantle', name), actions: ['bedrock-mantle:CreateInference', 'bedrock-mantle:CountTokens'], resources: [`arn:aws:bedrock-mantle:${region}:${Aws.ACCOUNT_ID}:project/*`] });
    } else {
      access.warnings.push(`Upstream "${name}" signs for service "${service}": the stack grants nothing for it; add the permissions its calls need to the function's role.`);
    }
  }
  return access;
}

/**
 * `anyModel`: every model, but in the upstream's Region. Foundation models and inference
 * profiles there are invoked directly; a profile routes to its foundation model in the other
 * Regions of its geography (or any, for `global.`), and those are allowed only through a profile
 * of the upstream's Region (`bedrock:InferenceProfileArn`), never invoked directly there.
 */
function anyModelStatements(access: BedrockAccess, name: string, region: string): void {
  const profiles = [`arn:aws:bedrock:${region}:${Aws.ACCOUNT_ID}:inference-profile/*`, `arn:aws:bedrock:${region}:${Aws.ACCOUNT_ID}:application-inference-profile/*`];
  access.statements.push({ sid: sid('AnyModel', name), actions: [...INVOKE, 'bedrock:CountTokens'], resources: [`arn:aws:bedrock:${region}::foundation-model/*`, ...profiles] });
  access.statements.push({ sid: sid('AnyModelDestinations', name), actions: INVOKE, resources: ['arn:aws:bedrock:*::foundation-model/*', 'arn:aws:bedrock:::foundation-model/*'], conditions: { StringLike: { 'bedrock:InferenceProfileArn': profiles } } });
  access.warnings.push(`Bedrock upstream "${name}" has "anyModel": the function may invoke every foundation model and inference profile in ${region}, and their destinations in other Regions through those profiles (a * resource). Name models with upstreamModel on the routes to narrow it.`);
}

function modelStatements(access: BedrockAccess, name: string, region: string, modelId: string): void {
  const id = sid(modelId, name);
  if (modelId.startsWith('arn:')) {
    access.statements.push({ sid: id, actions: INVOKE, resources: [modelId] });
    access.warnings.push(`Bedrock upstream "${name}" invokes the application inference profile ${modelId}: its foundation models must be granted too; set "anyModel": true on the upstream, or add them to the role.`);
    return;
  }
  const profile = PROFILE.exec(modelId);
  if (!profile) {
    access.statements.push({ sid: id, actions: [...INVOKE, 'bedrock:CountTokens'], resources: [`arn:aws:bedrock:${region}::foundation-model/${modelId}`] });
    return;
  }
  const profileArn = `arn:aws:bedrock:${region}:${Aws.ACCOUNT_ID}:inference-profile/${modelId}`;
  const base = profile[2] as string;
  access.statements.push({ sid: id, actions: INVOKE, resources: [profileArn] });
  const destinations = [`arn:aws:bedrock:*::foundation-model/${base}`, ...(profile[1] === 'global' ? [`arn:aws:bedrock:::foundation-model/${base}`] : [])];
  access.statements.push({ sid: `${id}Destinations`, actions: INVOKE, resources: destinations, conditions: { StringEquals: { 'bedrock:InferenceProfileArn': profileArn } } });
}

/** A statement id from a model id and upstream name (letters and digits only). */
function sid(model: string, upstream: string): string {
  const words = `${upstream} ${model}`.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return `Bedrock${words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('')}`.slice(0, 100);
}
