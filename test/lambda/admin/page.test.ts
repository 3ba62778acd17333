import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as esbuild from 'esbuild';
import { buildConsole, DIST_DIR, sizes, UI_DIR } from '../../../bin/build-console.ts';
import { PROJECT_ROOT } from '../../../lib/constructs/gateway-function.ts';

/**
 * The console page as built and committed (lambda/admin/ui/dist): it is what its sources build
 * to, it fits its size budget, and nothing in it or its sources can run markup as code.
 */
/** Everything the first view loads (the page, its script and stylesheet), gzipped: docs/console.md, "Size". */
export const PAGE_BUDGET_GZIP_BYTES = 60 * 1024;

function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`]));
}

describe('the console page', () => {
  let built: Map<string, Buffer>;
  beforeAll(async () => {
    built = await buildConsole();
  });

  test('the committed build is exactly what the sources build to (run npm run build:console after changing them)', () => {
    expect(filesUnder(DIST_DIR).sort()).toEqual([...built.keys()].sort());
    for (const [name, bytes] of built) expect([name, readFileSync(join(DIST_DIR, name)).equals(bytes)]).toEqual([name, true]);
  });

  test(`the first view loads at most ${PAGE_BUDGET_GZIP_BYTES / 1024} KB gzipped`, () => {
    const total = sizes(built).reduce((sum, entry) => sum + entry.gzip, 0);
    expect(total).toBeLessThanOrEqual(PAGE_BUDGET_GZIP_BYTES);
  });

  test('no inline script or style anywhere (the CSP allows neither), and no source sets HTML', () => {
    const page = built.get('index.html')?.toString('utf8') ?? '';
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(page).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    for (const file of filesUnder(join(UI_DIR, 'src'))) {
      const source = readFileSync(join(UI_DIR, 'src', file), 'utf8');
      expect([file, /dangerouslySetInnerHTML|innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function/.test(source)]).toEqual([file, false]);
      expect([file, /\sstyle=/.test(source)]).toEqual([file, false]);
    }
  });

  test('the request path imports nothing of the console: lambda/gateway.ts bundles without lambda/admin', async () => {
    const result = await esbuild.build({ entryPoints: ['lambda/gateway.ts'], absWorkingDir: PROJECT_ROOT, bundle: true, platform: 'node', format: 'esm', write: false, metafile: true, logLevel: 'silent', external: ['@aws-sdk/*'] });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs).toContain('lambda/handlers/dispatch.ts');
    expect(inputs.filter((path) => path.startsWith('lambda/admin/'))).toEqual([]);
  });
});
