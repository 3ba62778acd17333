import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { HandlerResponse } from '../deps.ts';
import { securityHeaders } from './http.ts';

/**
 * The console page: static files built from lambda/admin/ui/src by `npm run build:console` into
 * lambda/admin/ui/dist (committed; a test rebuilds and compares). They are read at first use,
 * from beside this module in source runs (npm start) and from `ui/dist` beside the bundle on
 * Lambda (lib/constructs/console-assets.ts copies them there), and gzipped once. Hashed asset
 * names are cached for a year; the HTML never (it names the current hashes).
 */
export interface AssetManifest {
  /** Hashed file names under /admin/assets/. */
  js: string;
  css: string;
}

interface Asset {
  type: string;
  raw: Buffer;
  gzip: Buffer;
  immutable: boolean;
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.html': 'text/html; charset=utf-8' };
const ASSET_NAME = /^[a-z]+-[A-Z0-9]{8}\.(js|css)$/;

export class ConsoleAssets {
  readonly #dir: URL;
  #files: Map<string, Asset> | undefined;
  #manifest: AssetManifest | undefined;

  constructor(dir: URL = new URL('./ui/dist/', import.meta.url)) {
    this.#dir = dir;
  }

  manifest(): AssetManifest {
    this.#load();
    return this.#manifest as AssetManifest;
  }

  /** The page (`/admin`) or an asset (`/admin/assets/<name>`), or undefined when there is no such file. */
  answer(path: string, acceptEncoding: string | undefined, origin: string): HandlerResponse | undefined {
    const files = this.#load();
    const name = path === '/admin' || path === '/admin/' ? 'index.html' : path.startsWith('/admin/assets/') ? path.slice('/admin/assets/'.length) : undefined;
    const asset = name === undefined ? undefined : files.get(name);
    if (!asset) return undefined;
    const gzip = /\bgzip\b/i.test(acceptEncoding ?? '');
    const bytes = gzip ? asset.gzip : asset.raw;
    const headers: Record<string, string> = {
      ...securityHeaders(origin),
      'content-type': asset.type,
      'content-length': String(bytes.length),
      'cache-control': asset.immutable ? 'public, max-age=31536000, immutable' : 'no-store',
      vary: 'accept-encoding',
    };
    if (gzip) headers['content-encoding'] = 'gzip';
    return { statusCode: 200, headers, body: new ReadableStream<Uint8Array>({ start: (controller) => (controller.enqueue(new Uint8Array(bytes)), controller.close()) }) };
  }

  #load(): Map<string, Asset> {
    if (this.#files) return this.#files;
    const read = (name: string) => readFileSync(new URL(name, this.#dir));
    const manifest = JSON.parse(read('manifest.json').toString('utf8')) as AssetManifest;
    if (!ASSET_NAME.test(manifest.js) || !ASSET_NAME.test(manifest.css)) throw new Error('the console manifest names no hashed assets: run npm run build:console');
    const files = new Map<string, Asset>();
    const add = (name: string, path: string, immutable: boolean) => {
      const raw = read(path);
      files.set(name, { type: TYPES[name.slice(name.lastIndexOf('.'))] as string, raw, gzip: gzipSync(raw, { level: 9 }), immutable });
    };
    add('index.html', 'index.html', false);
    add(manifest.js, `assets/${manifest.js}`, true);
    add(manifest.css, `assets/${manifest.css}`, true);
    this.#manifest = manifest;
    this.#files = files;
    return files;
  }
}
