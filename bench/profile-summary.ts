import { readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Summarizes a V8 CPU profile of the gateway process by self time, per function and per module.
 * Frames of the minified bundle are mapped back through its source map to the original file and
 * line (the minified names mean nothing), and labelled with that source line.
 */
interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTime {
  label: string;
  ms: number;
  /** Share of the busy (non-idle) sampled time. */
  share: number;
}

export interface ProfileSummary {
  name: string;
  busyMs: number;
  byLayer: SelfTime[];
  byModule: SelfTime[];
  byFunction: SelfTime[];
  /** With `activities`: each sample charged to the first activity any frame of its stack belongs to. */
  byActivity?: SelfTime[];
}

/** A named part of the work, recognised by a frame anywhere on the sampled stack (module path, or label). */
export interface Activity {
  name: string;
  matches(frame: { module: string; label: string }): boolean;
}

export interface SummaryOptions {
  top?: number;
  /** Groups modules into layers (default: the local server's layers). */
  layerOf?: (module: string) => string;
  /** In precedence order; samples matching none go to "other". */
  activities?: Activity[];
}

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Where a frame's code lives, grouped the way a fix would be chosen. */
export function layerOf(module: string): string {
  if (module.startsWith('lambda/')) return 'gateway code (lambda/)';
  if (module.startsWith('bundled node_modules/')) return 'bundled dependencies';
  if (module.startsWith('node:')) return 'Node.js core (streams, http, fetch)';
  if (module.startsWith('bin/')) return 'Function URL emulation (bin/local/)';
  if (module.startsWith('(gc)')) return 'garbage collection';
  if (module.startsWith('(')) return 'V8 / native (builtins, program)';
  return 'benchmark wiring and unbundled modules';
}

function repoPath(path: string): string {
  const inModules = path.lastIndexOf('node_modules/');
  if (inModules !== -1) {
    const parts = path.slice(inModules + 'node_modules/'.length).split('/');
    // A scope, or the build cache (the runtime client built by test/runtime/build-ric.ts): two segments name it.
    return `node_modules/${parts[0]?.startsWith('@') || parts[0] === '.cache' ? `${parts[0]}/${parts[1]}` : parts[0]}`;
  }
  return path.startsWith(ROOT) ? path.slice(ROOT.length) : path;
}

export function summarizeProfile(name: string, profilePath: string, bundlePath: string, mapPath: string, options: SummaryOptions = {}): ProfileSummary {
  const { top = 15, layerOf: layer = layerOf, activities } = options;
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const map = new SourceMap(JSON.parse(readFileSync(mapPath, 'utf8')));
  const bundleUrl = pathToFileURL(bundlePath).href;
  const mapDir = new URL('.', bundleUrl);
  const sources = new Map<string, string[]>();
  const sourceLine = (file: string, line: number) => {
    if (!sources.has(file)) {
      try {
        sources.set(file, readFileSync(file, 'utf8').split('\n'));
      } catch {
        sources.set(file, []);
      }
    }
    return (sources.get(file)?.[line] ?? '').trim().slice(0, 70);
  };

  const frames = new Map<number, { module: string; label: string }>();
  for (const { id, callFrame } of profile.nodes) {
    const { functionName, url, lineNumber, columnNumber } = callFrame;
    if (url === bundleUrl) {
      const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string; originalLine?: number };
      const file = entry.originalSource === undefined ? bundlePath : fileURLToPath(new URL(entry.originalSource, mapDir));
      const module = repoPath(file);
      const shown = module.startsWith('node_modules/') ? `bundled ${module}` : module;
      const line = entry.originalLine ?? 0;
      const where = module.startsWith('node_modules/') ? `${repoPath(file)}…${file.slice(file.lastIndexOf('/'))}` : module;
      frames.set(id, { module: shown, label: `${where}:${line + 1} ${sourceLine(file, line)}` });
    } else if (url === '') {
      const module = functionName === '(garbage collector)' ? '(gc)' : functionName.startsWith('(') ? functionName : `(native ${functionName || '?'})`;
      frames.set(id, { module, label: functionName || '(native)' });
    } else {
      const module = url.startsWith('node:') ? url : repoPath(url.startsWith('file:') ? fileURLToPath(url) : url);
      frames.set(id, { module, label: `${functionName || '(anonymous)'} ${module}:${lineNumber + 1}` });
    }
  }

  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const activityOf = (id: number): string => {
    if (!activities) return '';
    let best = activities.length;
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = frames.get(at);
      if (frame === undefined) continue;
      const index = activities.findIndex((activity) => activity.matches(frame));
      if (index !== -1 && index < best) best = index;
    }
    return activities[best]?.name ?? 'other';
  };
  const byModule = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const byLayer = new Map<string, number>();
  const byActivity = new Map<string, number>();
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const frame = frames.get(profile.samples[i] as number);
    const ms = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    if (frame === undefined || frame.module === '(idle)') continue;
    busy += ms;
    byModule.set(frame.module, (byModule.get(frame.module) ?? 0) + ms);
    byFunction.set(frame.label, (byFunction.get(frame.label) ?? 0) + ms);
    const inLayer = layer(frame.module);
    byLayer.set(inLayer, (byLayer.get(inLayer) ?? 0) + ms);
    if (activities) {
      const activity = activityOf(profile.samples[i] as number);
      byActivity.set(activity, (byActivity.get(activity) ?? 0) + ms);
    }
  }
  const ranked = (totals: Map<string, number>, limit: number) =>
    [...totals]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([label, ms]) => ({ label, ms, share: busy > 0 ? ms / busy : 0 }));
  return { name, busyMs: busy, byLayer: ranked(byLayer, 12), byModule: ranked(byModule, top), byFunction: ranked(byFunction, top), ...(activities ? { byActivity: ranked(byActivity, activities.length + 1) } : {}) };
}

export function formatProfile(summary: ProfileSummary): string {
  const lines = [`Profile "${summary.name}": ${summary.busyMs.toFixed(0)} ms busy (self time, idle excluded)`];
  const section = (title: string, rows: SelfTime[]) => {
    lines.push(`  ${title}`);
    for (const row of rows) lines.push(`    ${(row.share * 100).toFixed(1).padStart(5)}%  ${row.label}`);
  };
  if (summary.byActivity) section('by activity (whole stack: the first listed activity on it)', summary.byActivity);
  section('by layer', summary.byLayer);
  section('by module', summary.byModule);
  section('by function (original source line)', summary.byFunction);
  return lines.join('\n');
}
