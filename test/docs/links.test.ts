import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Every relative link in README.md and docs/*.md resolves: the file exists, and an anchor names a
 * heading of the file it points into (GitHub's heading ids). Links inside code blocks and to other
 * sites are not checked.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const DOCS = [join(ROOT, 'README.md'), ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => join(ROOT, 'docs', name))];

/** Markdown without its fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingIds(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const text = (match[1] as string).replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const base = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

function links(file: string): { target: string; line: number }[] {
  const text = prose(readFileSync(file, 'utf8'));
  const found: { target: string; line: number }[] = [];
  for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    found.push({ target: match[1] as string, line: text.slice(0, match.index).split('\n').length });
  }
  return found;
}

test('the documents exist', () => {
  expect(DOCS.length).toBeGreaterThan(10);
});

test.each(DOCS.map((file) => [relative(ROOT, file), file]))('every relative link and anchor in %s resolves', (_name, file) => {
  const broken: string[] = [];
  for (const { target, line } of links(file)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const into = path === '' ? file : resolve(dirname(file), decodeURI(path));
    if (!existsSync(into)) {
      broken.push(`line ~${line}: ${target} (no such file)`);
      continue;
    }
    if (anchor !== undefined && into.endsWith('.md') && !headingIds(readFileSync(into, 'utf8')).has(anchor)) {
      broken.push(`line ~${line}: ${target} (no heading with id "${anchor}" in ${relative(ROOT, into)})`);
    }
  }
  expect(broken).toEqual([]);
});

test('heading ids follow GitHub', () => {
  expect([...headingIds('# The `gateway` context of cdk.json\n## Memory size: cold start and cost\n## Lambda memory sizes: cold start and cost (bench/lambda/)\n## Claude Code: "There\'s an issue"\n## Setup\n## Setup\n```\n# not a heading\n```')]).toEqual([
    'the-gateway-context-of-cdkjson',
    'memory-size-cold-start-and-cost',
    'lambda-memory-sizes-cold-start-and-cost-benchlambda',
    'claude-code-theres-an-issue',
    'setup',
    'setup-1',
  ]);
});
