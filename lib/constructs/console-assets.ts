import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';

/** The console page as built and committed (npm run build:console). */
export const CONSOLE_DIST = 'lambda/admin/ui/dist';

/**
 * Bundling hooks that put the console page beside the function's index.mjs, at `ui/dist`, where
 * lambda/admin/assets.ts reads it (`./ui/dist/` from the module, which is index.mjs once bundled).
 * The files are part of the asset, so a changed page changes the asset hash and deploys.
 * `next`: hooks of others, run first.
 */
export function consoleAssetHooks(next?: ICommandHooks): ICommandHooks {
  return {
    beforeBundling: (inputDir, outputDir) => next?.beforeBundling(inputDir, outputDir) ?? [],
    beforeInstall: (inputDir, outputDir) => next?.beforeInstall(inputDir, outputDir) ?? [],
    afterBundling: (inputDir, outputDir) => [...(next?.afterBundling(inputDir, outputDir) ?? []), `mkdir -p "${outputDir}/ui"`, `cp -R "${inputDir}/${CONSOLE_DIST}" "${outputDir}/ui/dist"`],
  };
}
