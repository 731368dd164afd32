// Slow clients must not lock out real users (issue 15, fault 1).
//
// Half-open connections that never finish their request head used to hold
// libmicrohttpd's slots: 64 from 127.0.0.1 filled the per-address limit (and
// a user behind `ssh -L` is 127.0.0.1 too), 300 from 127.0.0.2.. filled all
// 256 slots. Now a request head has a deadline (head_timeout) and connections
// that have not shown the token share a few slots (untrusted_connections), the
// oldest evicted first, so a token-bearing client always gets in.
//
// Load stays on loopback, bounded in count (≤ 300 sockets) and time (the
// server cuts every attacker within head_timeout; each test waits for all of
// them to close).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { request } from 'node:http';
import { startServer } from './lib.mjs';

const HEAD_TIMEOUT_S = 3;
let srv, port;

before(async () => {
  srv = await startServer({ args: ['--head-timeout', String(HEAD_TIMEOUT_S), '--conn-timeout', '5'] });
  port = Number(new URL(srv.base).port);
});
after(async () => { await srv.stop(); srv.cleanup(); });

/** A slow client from localAddress: sends a request line, then one header
 * line every gapMs, never the blank line. Resolves when the server closes
 * it, with how long it was held; stops writing by itself after maxMs. */
function dribbler(localAddress, gapMs, maxMs) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let timer = null;
    const sock = connect({ port, host: '127.0.0.1', localAddress }, () => {
      sock.write('GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      timer = setInterval(() => {
        if (Date.now() - t0 > maxMs) { sock.destroy(); return; }
        sock.write(`X-Slow-${Date.now() % 1000}: a\r\n`);
      }, gapMs);
    });
    sock.on('error', () => {});
    sock.on('close', () => { clearInterval(timer); resolve(Date.now() - t0); });
  });
}

/** GET /api/health on a fresh connection from 127.0.0.1 with the token;
 * resolves {status, ms}, or {status: 0, error} after 5 s / on an error. */
function health() {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const rq = request({ host: '127.0.0.1', port, path: '/api/health', agent: false,
      headers: { Authorization: `Bearer ${srv.token}` } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, ms: Date.now() - t0 }));
    });
    rq.setTimeout(5000, () => rq.destroy(new Error('timed out after 5 s')));
    rq.on('error', (err) => resolve({ status: 0, ms: Date.now() - t0, error: err.message }));
    rq.end();
  });
}

/** Opens n dribblers (address i from addrOf(i)), checks that a token
 * client is served within 1 s a few times while they are held, then waits
 * for the server to cut them all. */
async function underAttack(n, addrOf) {
  const maxMs = (HEAD_TIMEOUT_S + 6) * 1000;
  const held = [];
  for (let i = 0; i < n; i++) {
    held.push(dribbler(addrOf(i), 500, maxMs));
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 700));
  for (let k = 0; k < 3; k++) {
    const h = await health();
    assert.equal(h.status, 200, `health during the attack: ${h.error || h.status}`);
    assert.ok(h.ms < 1000, `health took ${h.ms} ms beside ${n} slow clients`);
    await new Promise((r) => setTimeout(r, 300));
  }
  const times = await Promise.all(held);
  const longest = Math.max(...times);
  // cut by the head deadline (or evicted sooner), not by the client giving up
  assert.ok(longest < (HEAD_TIMEOUT_S + 3) * 1000, `a slow client was held ${longest} ms (head_timeout ${HEAD_TIMEOUT_S} s)`);
  const h = await health();
  assert.equal(h.status, 200);
}

test('64 dribbling clients from 127.0.0.1 do not lock out a user on 127.0.0.1', async () => {
  await underAttack(64, () => '127.0.0.1');
});

test('300 dribbling clients from 127.0.0.2.. do not fill every slot', async () => {
  await underAttack(300, (i) => `127.0.0.${2 + (i % 30)}`);
});

test('a browser keep-alive connection that showed its token stays usable', async () => {
  // one connection, several requests: trusted after the first, so the
  // untrusted share's evictions never touch it
  const agentReqs = [];
  for (let i = 0; i < 3; i++) agentReqs.push(await srv.req('/api/runs').then((r) => r.status));
  assert.deepEqual(agentReqs, [200, 200, 200]);
});

test('no_auth: every whole head is trusted, yet dribblers are still cut and capped', async () => {
  const open = await startServer({ args: ['--no-auth', '--head-timeout', '2', '--untrusted-connections', '8'] });
  try {
    const p = Number(new URL(open.base).port);
    const slow = Array.from({ length: 20 }, () => new Promise((resolve) => {
      const t0 = Date.now();
      const sock = connect({ port: p, host: '127.0.0.1' }, () => sock.write('GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: '));
      const timer = setInterval(() => { if (!sock.destroyed) sock.write('a'); if (Date.now() - t0 > 8000) sock.destroy(); }, 300);
      sock.on('error', () => {});
      sock.on('close', () => { clearInterval(timer); resolve(Date.now() - t0); });
    }));
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const r = await open.req('/api/health');
    assert.equal(r.status, 200);
    assert.ok(Date.now() - t0 < 1000);
    const times = await Promise.all(slow);
    // 12 of the 20 evicted at once (share of 8), the rest cut at the 2 s deadline
    assert.ok(times.filter((ms) => ms < 1000).length >= 12, `evicted: ${times.join(' ')}`);
    assert.ok(Math.max(...times) < 4500, `held up to ${Math.max(...times)} ms (head_timeout 2 s)`);
  } finally {
    await open.stop();
    open.cleanup();
  }
});
