import { ConnectionPool } from '../http1/connection-pool.ts';

/**
 * POST for AWS's JSON APIs (two DynamoDB calls per metered request on Lambda) on the gateway's
 * kept-alive HTTP/1.1 client (http1/connection-pool.ts): the answer whole, as text.
 */
export interface TextAnswer {
  status: number;
  text: string;
}

/** Sockets per AWS endpoint (npm start's local server makes many calls at once); more calls wait their turn. */
export const MAX_SOCKETS = 32;

/** A BatchGetItem answer is at most 16 MB. */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

const pool = new ConnectionPool({ maxSockets: MAX_SOCKETS, maxIdle: MAX_SOCKETS });

export async function postForText(url: string, headers: Record<string, string>, body: string): Promise<TextAnswer> {
  const { head, body: bytes } = await pool.send(url, 'POST', headers, body).whole(MAX_ANSWER_BYTES);
  return { status: head.status, text: bytes.toString('utf8') };
}

/** Every idle socket closed (tests: idle sockets are unref'd and hold no process open); calls in flight finish on theirs. */
export function closeIdleSockets(): void {
  pool.closeIdle();
}
