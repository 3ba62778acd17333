/**
 * Files the function's asset holds beside its bundle (index.mjs), copied from the repository by
 * the bundling hook (lib/constructs/gateway-function.ts), and by the runtime tests and the
 * benchmark that build the same asset. Kept free of aws-cdk-lib, which takes seconds to load.
 * - the login helper script the handler serves (lambda/identity/helper-script.ts);
 * - the runtime's exec wrapper (lambda/runtime-wrapper.sh), which must stay executable.
 */
export const RUNTIME_WRAPPER_FILE = 'lambda/runtime-wrapper.sh';
export const FILES_BESIDE_BUNDLE = ['lambda/identity/gateway-login.mjs', RUNTIME_WRAPPER_FILE];

/** Where the wrapper is in the execution environment: the asset is unpacked at /var/task. */
export const RUNTIME_WRAPPER_PATH = '/var/task/runtime-wrapper.sh';
