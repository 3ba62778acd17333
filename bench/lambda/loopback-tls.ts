import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';

/**
 * HTTPS in front of the loopback stand-ins for DynamoDB, Secrets Manager and the upstream, so
 * the function pays what it pays on AWS for each new connection: a TLS handshake (key exchange,
 * certificate chain check) and Node's tls module. A cold start opens three such connections,
 * and at 128 MB each handshake runs on 7 % of a core. The certificates are made here with the
 * openssl CLI (a throw-away CA and a leaf for 127.0.0.1, RSA 2048 like the services' own) and
 * the function trusts the CA through NODE_EXTRA_CA_CERTS. What stays unlike AWS: no DNS lookup,
 * and no network round trip beyond loopback.
 */
export interface LoopbackTls {
  /** The CA certificate file, for NODE_EXTRA_CA_CERTS. */
  caFile: string;
  /** An https:// origin that forwards every connection, decrypted, to `target` (an http:// origin). */
  front(target: string): Promise<string>;
  close(): Promise<void>;
}

export async function startLoopbackTls(): Promise<LoopbackTls> {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-tls-'));
  const file = (name: string) => join(dir, name);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', '/CN=gateway bench CA', '-keyout', file('ca.key'), '-out', file('ca.pem')]);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', file('leaf.key'), '-out', file('leaf.csr')]);
  const extensions = file('leaf.ext');
  writeFileSync(extensions, 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
  openssl(['x509', '-req', '-in', file('leaf.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', extensions, '-out', file('leaf.pem')]);
  // The chain as the services send it: the leaf, then its issuer.
  const cert = `${readFileSync(file('leaf.pem'), 'utf8')}${readFileSync(file('ca.pem'), 'utf8')}`;
  const key = readFileSync(file('leaf.key'));
  const servers: tls.Server[] = [];
  const open = new Set<net.Socket>();

  return {
    caFile: file('ca.pem'),
    async front(target) {
      const { hostname, port, pathname } = new URL(target);
      // No Nagle delay on either leg: a small write must not wait for an ACK the other side delays.
      const server = tls.createServer({ key, cert, noDelay: true }, (secure) => {
        const plain = net.connect({ port: Number(port), host: hostname, noDelay: true });
        open.add(secure).add(plain);
        secure.pipe(plain).pipe(secure);
        const close = () => {
          secure.destroy();
          plain.destroy();
          open.delete(secure);
          open.delete(plain);
        };
        secure.on('error', close).on('close', close);
        plain.on('error', close).on('close', close);
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      // The target's path stays on the address: the embedded store's per-run secret is its path.
      return `https://127.0.0.1:${(server.address() as net.AddressInfo).port}${pathname === '/' ? '' : pathname}`;
    },
    async close() {
      for (const socket of open) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
