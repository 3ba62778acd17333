import type { ICommandHooks } from 'aws-cdk-lib/aws-lambda-nodejs';

/**
 * The gateway config travels as a file beside the handler bundle, not as an environment variable:
 * Lambda allows 4 KB for all of a function's variables together, and the config with sign-in
 * (its policies, managed settings, caps) outgrows that. The function finds it through
 * `GATEWAY_CONFIG_FILE` (lambda/config/config-source.ts).
 */
export const CONFIG_FILE_NAME = 'gateway-config.json';

/**
 * Base64 characters per command. A multiple of 4, so each piece decodes on its own; small enough
 * for the shortest command line a bundling shell takes (cmd.exe: 8,191 characters), since
 * NodejsFunction runs each hook command in a shell of its own (`bash -c`, or `cmd /c` on Windows).
 */
const CHUNK_CHARACTERS = 4_096;

/**
 * Commands that write `config` as `<outputDir>/gateway-config.json`. Both the path and the
 * content are passed base64-encoded, so no character of either can mean anything to a shell
 * (bash, cmd.exe, or the one of the Docker image when bundling falls back to it); `node` decodes
 * them, and is there wherever the bundle is built (NodejsFunction itself runs esbuild through it).
 */
export function configFileCommands(config: unknown, outputDir: string): string[] {
  const path = Buffer.from(`${outputDir}/${CONFIG_FILE_NAME}`).toString('base64');
  const content = Buffer.from(JSON.stringify(config)).toString('base64');
  const commands: string[] = [];
  for (let start = 0; start < content.length; start += CHUNK_CHARACTERS) {
    const write = start === 0 ? 'writeFileSync' : 'appendFileSync';
    const script = `const d=(s)=>Buffer.from(s,'base64');require('fs').${write}(d(process.argv[1]).toString(),d(process.argv[2]))`;
    commands.push(`node -e "${script}" ${path} ${content.slice(start, start + CHUNK_CHARACTERS)}`);
  }
  return commands;
}

/**
 * NodejsFunction hooks that add the config file to the bundle, after esbuild has written it and
 * after `base`'s own afterBundling commands (the files the handler reads beside its bundle).
 */
export function configFileHooks(config: unknown, base: ICommandHooks): ICommandHooks {
  return {
    ...base,
    afterBundling: (inputDir, outputDir) => [...base.afterBundling(inputDir, outputDir), ...configFileCommands(config, outputDir)],
  };
}
