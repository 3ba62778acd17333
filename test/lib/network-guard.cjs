// Preloaded with NODE_OPTIONS=--require into every process of a CLI run: refuses and records any
// connection or DNS lookup that is not loopback, so a test can assert a command stayed offline.
const dns = require('node:dns');
const fs = require('node:fs');
const net = require('node:net');

const record = (what) => fs.appendFileSync(process.env.NETWORK_GUARD_LOG, `${what}\n`);
const isLoopback = (host) => host === undefined || host === 'localhost' || host === '::1' || /^(::ffff:)?127\./.test(host);

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function guardedConnect(...args) {
  const options = Array.isArray(args[0]) ? args[0][0] : args[0];
  const host = typeof options === 'object' && options !== null ? (options.path === undefined ? options.host : undefined) : args[1];
  if (!isLoopback(host)) {
    record(`connect ${host}`);
    throw new Error(`network guard: refused a connection to ${host}`);
  }
  return connect.apply(this, args);
};

const lookup = dns.lookup;
dns.lookup = function guardedLookup(host, ...rest) {
  if (isLoopback(host)) return lookup.call(this, host, ...rest);
  record(`lookup ${host}`);
  const callback = rest.at(-1);
  process.nextTick(() => callback(Object.assign(new Error(`network guard: refused a lookup of ${host}`), { code: 'ENOTFOUND' })));
};
