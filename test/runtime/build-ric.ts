import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the native half of the Lambda runtime interface client (`aws-lambda-ric`) once, into
 * node_modules/.cache, so the real-runtime suite can run the production bundle under it.
 *
 * Why: the RIC's entry always loads `./rapid-client.node` (it fetches the next invocation through
 * it: aws-lambda-cpp over libcurl); npm does not ship that file, it is compiled by the package's
 * install scripts, which this project disables (package.json `allowScripts`). This runs the
 * package's own recipe on a copy of the package: scripts/preinstall.sh (curl and aws-lambda-cpp
 * from the tarballs in deps/, with cmake, make and a C++ compiler), then node-gyp as
 * scripts/postinstall.sh does, pointed at the running Node's headers so that nothing is
 * downloaded. The copy then holds the unmodified entry (index.mjs) next to its addon, which is
 * where the entry looks for it. About a minute on 2 cores; a second run only checks the build.
 *
 * `node test/runtime/build-ric.ts` builds (or says it is already built) and prints the entry.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PACKAGE_DIR = join(ROOT, 'node_modules', 'aws-lambda-ric');
const CACHE_DIR = join(ROOT, 'node_modules', '.cache', 'aws-lambda-ric');

function packageVersion(): string {
  return (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
}

/** One build per RIC version, platform, architecture and Node major (the addon uses Node-API, but its source includes node.h). */
function buildDir(): string {
  return join(CACHE_DIR, `${packageVersion()}-${process.platform}-${process.arch}-node${process.versions.node.split('.')[0]}`);
}

/** The RIC entry to run (`node <entry>`), or undefined when it has not been built yet. */
export function builtRicEntry(): string | undefined {
  const entry = join(buildDir(), 'aws-lambda-ric', 'index.mjs');
  return existsSync(join(dirname(entry), 'rapid-client.node')) && loads(dirname(entry)) ? entry : undefined;
}

/** The addon reads AWS_LAMBDA_RUNTIME_API when it is loaded; a port nothing listens on is enough to load it. */
function loads(dir: string): boolean {
  const probe = spawnSync(process.execPath, ['-e', `require(${JSON.stringify(join(dir, 'rapid-client.node'))})`], {
    env: { ...process.env, AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9' },
    encoding: 'utf8',
  });
  return probe.status === 0;
}

/**
 * Node's own headers: include/node in the distribution that holds the running binary (the npm
 * `node` packages CI installs ship them too), else the npm `nodedir` setting. Never a download.
 */
function nodeDir(): string {
  const candidates = [resolve(process.execPath, '..', '..'), process.env.npm_config_nodedir].filter((dir): dir is string => Boolean(dir));
  const found = candidates.find((dir) => existsSync(join(dir, 'include', 'node', 'node_api.h')));
  if (found === undefined) throw new Error(`No Node headers (include/node/node_api.h) in ${candidates.join(' or ')}; node-gyp must not download them.`);
  return found;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, log: string): void {
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  writeFileSync(log, `${result.stdout}\n${result.stderr}`, { flag: 'a' });
  if (result.status !== 0) throw new Error(`${[command, ...args].join(' ')} failed (exit ${result.status}); its output is in ${log}`);
}

/** Builds when needed; returns the entry and whether it was built now. */
export function buildRic(): { entry: string; built: boolean } {
  const existing = builtRicEntry();
  if (existing) return { entry: existing, built: false };

  const missing = ['cmake', 'make', 'g++', 'python3'].filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) throw new Error(`Building aws-lambda-ric's native part needs ${missing.join(', ')} on PATH.`);
  const target = buildDir();
  const work = `${target}.partial`;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const copy = join(work, 'aws-lambda-ric');
  // The files the install scripts use; the original package stays untouched.
  cpSync(PACKAGE_DIR, copy, { recursive: true, filter: (source) => !source.endsWith('rapid-client.node') });
  const log = join(work, 'build.log');
  const { npm_config_nodedir: _ignored, ...inherited } = process.env;
  const env = {
    ...inherited,
    // GNU tar warns on every entry of the macOS-made tarballs otherwise.
    TAR_OPTIONS: '--warning=no-unknown-keyword',
    // binding.gyp runs `node -p "require('node-addon-api')..."`: the running Node, found first.
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  };
  run('sh', ['scripts/preinstall.sh'], copy, env, log);
  // What scripts/postinstall.sh does, with node-gyp told where Node's headers are.
  const nodeGyp = join(ROOT, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  run(process.execPath, [nodeGyp, 'rebuild', '--directory=src/native', `--nodedir=${nodeDir()}`], copy, { ...env, DEPS_PREFIX: join(copy, 'deps', 'artifacts') }, log);
  cpSync(join(copy, 'src', 'native', 'build', 'Release', 'rapid-client.node'), join(copy, 'rapid-client.node'));
  // The intermediate trees are only needed to build the addon.
  for (const dir of ['deps/curl-src', 'deps/aws-lambda-cpp-src', 'deps/artifacts', 'src/native/build']) rmSync(join(copy, dir), { recursive: true, force: true });
  if (!loads(copy)) throw new Error(`The built ${join(copy, 'rapid-client.node')} does not load; see ${log}`);
  rmSync(target, { recursive: true, force: true });
  renameSync(work, target);
  return { entry: join(target, 'aws-lambda-ric', 'index.mjs'), built: true };
}

if (import.meta.main) {
  const started = Date.now();
  try {
    const { entry, built } = buildRic();
    console.log(`${built ? `Built in ${Math.round((Date.now() - started) / 1000)} s` : 'Already built'}: ${entry}`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
