import { bytesStream, type ChunkReader } from './relay.ts';

/**
 * The fetch `Response` members the gateway reads (status, headers, body, text/json/arrayBuffer),
 * without the fetch implementation behind the global `Response` and `Headers`: Node loads its
 * bundled undici the first time either global is touched, about 35 ms of CPU at a full core
 * (a third of a cold start at 512 MB, where the function has 29 % of a core; docs/performance.md).
 * The upstream HTTP client and the simulator answer with these; Bedrock's adapter still builds
 * real ones, so only Bedrock routes pay that load, once per instance.
 *
 * It is not a full Response (no clone, blob, formData, redirect or url), hence the cast where
 * it is returned as one: the gateway's request path must keep to the members here.
 */
export class LightHeaders {
  readonly #map = new Map<string, string>();

  /** Name/value pairs as received (node's rawHeaders) or as given; repeated names are joined as fetch does. */
  constructor(init: Iterable<readonly [string, string]> | Record<string, string> = {}) {
    const pairs = Symbol.iterator in init ? (init as Iterable<readonly [string, string]>) : Object.entries(init);
    for (const [name, value] of pairs) this.append(name, value);
  }

  append(name: string, value: string): void {
    const key = name.toLowerCase();
    const existing = this.#map.get(key);
    this.#map.set(key, existing === undefined ? value : `${existing}, ${value}`);
  }

  get(name: string): string | null {
    return this.#map.get(name.toLowerCase()) ?? null;
  }

  has(name: string): boolean {
    return this.#map.has(name.toLowerCase());
  }

  /** In name order, as a fetch Headers iterates. */
  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#map.keys()].sort()) yield [name, this.#map.get(name) as string];
  }

  keys(): IterableIterator<string> {
    return [...this.#map.keys()].sort()[Symbol.iterator]();
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(callback: (value: string, name: string) => void): void {
    for (const [name, value] of this.entries()) callback(value, name);
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

const encoder = new TextEncoder();

/**
 * A body that can be had either way: as a stream (made only when `body` is read: a relayed
 * stream) or whole (`text()`, `json()`, `arrayBuffer()` before anyone took the stream: a
 * complete answer, read without a web stream in between).
 */
export interface BodySource {
  stream(): ReadableStream<Uint8Array>;
  /** Chunk by chunk without a web stream (what the relay reads). */
  reader?(): ChunkReader;
  bytes(): Promise<Uint8Array>;
}

export class LightResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: LightHeaders;
  #body: ReadableStream<Uint8Array> | null | undefined;
  #source: BodySource | undefined;
  #used = false;

  constructor(body: ReadableStream<Uint8Array> | BodySource | string | null, init: { status: number; statusText?: string; headers: LightHeaders | Record<string, string> }) {
    this.status = init.status;
    this.statusText = init.statusText ?? '';
    this.headers = init.headers instanceof LightHeaders ? init.headers : new LightHeaders(init.headers);
    if (typeof body === 'string') this.#body = bytesStream(encoder.encode(body));
    else if (body === null || body instanceof ReadableStream) this.#body = body;
    else this.#source = body;
  }

  get body(): ReadableStream<Uint8Array> | null {
    if (this.#body === undefined) this.#body = (this.#source as BodySource).stream();
    return this.#body;
  }

  /** Whether there is a body, without making its web stream. */
  get hasBody(): boolean {
    return this.#body === undefined ? this.#source !== undefined : this.#body !== null;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const bytes = await this.#bytes();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async text(): Promise<string> {
    return Buffer.from(await this.#bytes()).toString('utf8');
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** The whole body as received (arrayBuffer() must copy it); a second read fails, as with fetch. */
  bytes(): Promise<Uint8Array> {
    return this.#bytes();
  }

  async #bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError('Body is unusable: Body has already been read');
    this.#used = true;
    if (this.#body === undefined && this.#source !== undefined) return this.#source.bytes();
    if (this.body === null) return new Uint8Array();
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.body) chunks.push(chunk);
    return chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks);
  }

  /** The body chunk by chunk for the relay, without making the web stream when the source can avoid it; null without a body. */
  bodyReader(): ChunkReader | null {
    if (this.#body === undefined && this.#source?.reader !== undefined) {
      this.#used = true;
      return this.#source.reader();
    }
    return this.body?.getReader() ?? null;
  }

  /** This object where a fetch Response is expected (see the class comment for what it lacks). */
  asResponse(): Response {
    return this as unknown as Response;
  }
}

/** What the relay reads a response's body from: the light reader of the gateway's own client, else the web stream's. */
export function bodyReaderOf(response: Response): ChunkReader | null {
  if (response instanceof LightResponse) return response.bodyReader();
  return response.body?.getReader() ?? null;
}

/** Whether a response has a body, without making the web stream of the gateway's own client. */
export function hasBody(response: Response): boolean {
  return response instanceof LightResponse ? response.hasBody : response.body !== null;
}

/** Reads a whole (non-streamed) body; used for JSON replies and upstream errors. */
export async function readBody(source: Response): Promise<Uint8Array> {
  // The gateway's own client hands its bytes over as they are.
  if (source instanceof LightResponse) return source.bytes();
  return new Uint8Array(await source.arrayBuffer());
}
