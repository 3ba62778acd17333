import type { Socket } from 'node:net';

/**
 * A cap on the connections that have not (yet) carried a request with an accepted key. Each
 * costs little (a socket, a parser, at most 16 KiB of head for at most the head timeout), but
 * their number was bounded only by the file descriptor limit, whose exhaustion would also stop
 * the gateway from reaching its upstreams and its store. Over the cap the oldest unproven
 * connection is closed, not the new one: a stranger holding the cap cannot keep a team member out,
 * who sends a head with a key within milliseconds of connecting and is then no longer counted.
 */
export class ConnectionGate {
  readonly limit: number;
  /** In arrival order (a Set iterates in insertion order): the first is the oldest. */
  readonly #unproven = new Set<Socket>();

  constructor(limit: number) {
    this.limit = limit;
  }

  get unproven(): number {
    return this.#unproven.size;
  }

  admit(socket: Socket): void {
    this.#unproven.add(socket);
    socket.once('close', () => this.#unproven.delete(socket));
    if (this.#unproven.size <= this.limit) return;
    const oldest = this.#unproven.values().next().value as Socket;
    this.#unproven.delete(oldest);
    oldest.destroy();
  }

  /** The connection carried a request with an accepted key: it no longer counts. */
  prove(socket: Socket): void {
    this.#unproven.delete(socket);
  }
}
