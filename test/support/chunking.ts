/** Deterministic pseudo-random generator (mulberry32), so a failing split can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Splits bytes at random boundaries (including 1-byte pieces and cuts inside UTF-8 characters). */
export function randomChunks(bytes: Uint8Array, seed: number, maxPiece = 64): Uint8Array[] {
  const random = seededRandom(seed);
  const chunks: Uint8Array[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const size = 1 + Math.floor(random() * maxPiece);
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

export function streamOf(chunks: Uint8Array[], options: { failAfter?: boolean } = {}): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream({
    pull(controller) {
      if (index < chunks.length) controller.enqueue(chunks[index++] as Uint8Array);
      else if (options.failAfter) controller.error(new TypeError('terminated: other side closed'));
      else controller.close();
    },
  });
}

/** Everything a web stream or a Node Readable (the relay's output) yields. */
export async function collect(stream: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of stream) parts.push(chunk);
  return Buffer.concat(parts);
}
