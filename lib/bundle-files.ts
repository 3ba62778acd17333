import { createRequire } from 'node:module';
import { basename } from 'node:path';

/**
 * Files the function's asset holds beside its bundle (index.mjs), copied from the repository by
 * the bundling hook (lib/constructs/gateway-function.ts), and by the runtime tests and the
 * benchmark that build the same asset. Kept free of aws-cdk-lib, which takes seconds to load.
 * - the login helper script the handler serves (lambda/identity/helper-script.ts);
 * - the runtime's exec wrapper (lambda/runtime-wrapper.sh), which must stay executable.
 * The gateway's runtime client is built beside them (besideBundleCommands).
 */
export const RUNTIME_WRAPPER_FILE = 'lambda/runtime-wrapper.sh';
export const FILES_BESIDE_BUNDLE = ['lambda/identity/gateway-login.mjs', RUNTIME_WRAPPER_FILE];

/**
 * The gateway's own runtime client (lambda/runtime-client/), bundled beside the handler: the
 * wrapper runs it in place of AWS's. No dependencies but Node's own modules.
 */
export const RUNTIME_CLIENT_ENTRY = 'lambda/runtime-client/main.ts';
export const RUNTIME_CLIENT_FILE = 'runtime-client.mjs';

/** Where the wrapper is in the execution environment: the asset is unpacked at /var/task. */
export const RUNTIME_WRAPPER_PATH = '/var/task/runtime-wrapper.sh';

/**
 * The shell commands that put those files beside a bundle in `outputDir`: the bundling hook's
 * (NodejsFunction runs them), run as they are by the runtime tests and the benchmark. The wrapper
 * is made executable whatever the checkout's mode: Lambda refuses one it cannot execute (the
 * asset's zip keeps the mode).
 */
export function besideBundleCommands(inputDir: string, outputDir: string, target: string): string[] {
  const esbuild = createRequire(import.meta.url).resolve('esbuild/bin/esbuild');
  return [
    ...FILES_BESIDE_BUNDLE.map((file) => `cp "${inputDir}/${file}" "${outputDir}/${basename(file)}"`),
    `chmod 755 "${outputDir}/${basename(RUNTIME_WRAPPER_FILE)}"`,
    `"${esbuild}" "${inputDir}/${RUNTIME_CLIENT_ENTRY}" --bundle --platform=node --format=esm --target=${target} --minify --log-level=warning --outfile="${outputDir}/${RUNTIME_CLIENT_FILE}"`,
  ];
}
