// The loopback server's guards, exercised over raw HTTP (no browser needed): token, Host
// allow-list, Origin, body limits, content type, static file confinement and headers.
import { expect, test } from './fixtures';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { CONTENT_SECURITY_POLICY, startServer, type RunningServer } from '../src/server/http';
import { fakeService } from '../test/doubles/service';
import { isPacked, unpackEnvelope } from '../src/shared/wirePack';

let dir: string;
let server: RunningServer;
let fake: Awaited<ReturnType<typeof fakeService>>;

test.beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'holdfast-srv-'));
  const root = path.join(dir, 'renderer');
  mkdirSync(path.join(root, 'assets'), { recursive: true });
  writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(path.join(root, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(path.join(dir, 'secret.txt'), 'top secret');
  symlinkSync(path.join(dir, 'secret.txt'), path.join(root, 'escape.txt'));
  fake = await fakeService();
  // A connected node is watched while someone listens: its containerd events are relayed.
  await fake.handlers['nodes.connect']({ name: 'edge-01' });
  server = await startServer({ handlers: fake.handlers, rendererDir: root, maxBodyBytes: 4096, keepAliveMs: 200 });
});

test.afterAll(async () => {
  await server.close();
  await fake.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function request(
  opts: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: opts.method ?? 'GET',
        path: opts.path,
        headers: { host: `127.0.0.1:${server.port}`, ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

const api = (channel: string, body: unknown, headers: Record<string, string> = {}) =>
  request({
    method: 'POST',
    path: `/api/${channel}`,
    headers: { 'content-type': 'application/json', 'x-holdfast-token': server.token, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

test('url, token and binding', () => {
  expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
  expect(server.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
});

test('a valid call returns the result envelope', async () => {
  const res = await api('nodes.list', {});
  expect(res.status).toBe(200);
  // Record lists cross packed (src/shared/wirePack.ts): a value table and rows of indices.
  const body = JSON.parse(res.body) as { ok: true; result: unknown };
  expect(isPacked(body.result)).toBe(true);
  expect(unpackEnvelope(body)).toMatchObject({ ok: true, result: [{ name: 'edge-01' }, { name: 'edge-02' }] });
  expect(res.headers['content-type']).toContain('application/json');
});

test('token: missing or wrong → 401', async () => {
  expect((await api('nodes.list', {}, { 'x-holdfast-token': '' })).status).toBe(401);
  expect((await api('nodes.list', {}, { 'x-holdfast-token': `${server.token}x` })).status).toBe(401);
  const res = await request({ method: 'POST', path: '/api/nodes.list', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(res.status).toBe(401);
  expect(JSON.parse(res.body)).toMatchObject({ ok: false, error: { code: 'REFUSED' } });
});

test('unknown channel → 404; prototype keys are not channels', async () => {
  expect((await api('nodes.format', {})).status).toBe(404);
  expect((await api('__proto__', {})).status).toBe(404);
  expect((await api('toString', {})).status).toBe(404);
});

test('invalid args → INVALID_INPUT envelope; handler errors → error envelope', async () => {
  const bad = await api('nodes.remove', { name: '../../etc' });
  expect(JSON.parse(bad.body)).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT' } });
  const missing = await api('nodes.remove', { name: 'nope' });
  expect(JSON.parse(missing.body)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  const notJson = await api('nodes.list', '{oops');
  expect(notJson.status).toBe(400);
});

test('Host header must be the loopback address with our port (DNS rebinding)', async () => {
  for (const host of ['evil.example', `evil.example:${server.port}`, '127.0.0.1', `127.0.0.1:${server.port + 1}`]) {
    expect((await request({ path: '/', headers: { host } })).status).toBe(403);
    expect((await api('nodes.list', {}, { host })).status).toBe(403);
  }
  expect((await request({ path: '/', headers: { host: `localhost:${server.port}` } })).status).toBe(200);
});

test('cross-origin requests are refused even with the token', async () => {
  expect((await api('nodes.list', {}, { origin: 'https://evil.example' })).status).toBe(403);
  expect((await api('nodes.list', {}, { origin: `http://127.0.0.1:${server.port}` })).status).toBe(200);
});

test('only POST with application/json; body size is capped', async () => {
  expect((await request({ path: '/api/nodes.list', headers: { 'x-holdfast-token': server.token } })).status).toBe(405);
  expect((await api('nodes.list', '{}', { 'content-type': 'text/plain' })).status).toBe(415);
  expect((await api('nodes.list', JSON.stringify({ pad: 'x'.repeat(10_000) }))).status).toBe(413);
});

test('an oversized chunked body (no Content-Length) still gets a 413 answer', async () => {
  const status = await new Promise<number>((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port: server.port,
        method: 'POST',
        path: '/api/nodes.list',
        headers: {
          host: `127.0.0.1:${server.port}`,
          'content-type': 'application/json',
          'transfer-encoding': 'chunked',
          'x-holdfast-token': server.token,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write('{"pad":"');
    for (let i = 0; i < 8; i++) req.write('x'.repeat(1024));
    req.end('"}');
  });
  expect(status).toBe(413);
});

test('static files carry the strict CSP and nosniff', async () => {
  const res = await request({ path: '/' });
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
  expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
  expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect((await request({ path: '/assets/app.js' })).headers['content-type']).toContain('text/javascript');
  expect((await request({ path: '/?token=abc' })).status).toBe(200);
});

test('no directory traversal or symlink escape', async () => {
  for (const p of ['/../secret.txt', '/..%2fsecret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/%00', '/escape.txt', '/assets', '/nope']) {
    const res = await request({ path: p });
    expect(res.status, p).toBe(404);
    expect(res.body).not.toContain('top secret');
  }
  expect((await request({ method: 'DELETE', path: '/' })).status).toBe(405);
});

test('GET /api/events: the same token guard; an SSE stream with keep-alive comments; unsubscribed when the client leaves', async () => {
  // No token, a wrong token, or the token as a query parameter: refused (it is only ever a header).
  expect((await request({ path: '/api/events' })).status).toBe(401);
  expect((await request({ path: '/api/events', headers: { 'x-holdfast-token': 'nope-nope-nope-nope' } })).status).toBe(401);
  expect((await request({ path: `/api/events?token=${encodeURIComponent(server.token)}` })).status).toBe(401);
  expect((await request({ method: 'POST', path: '/api/events', headers: { 'x-holdfast-token': server.token } })).status).toBe(405);

  const got = await new Promise<{ status: number; type: string | undefined; csp: string | undefined; text: string }>((resolve, reject) => {
    const req = http.get(
      { host: '127.0.0.1', port: server.port, path: '/api/events', headers: { host: `127.0.0.1:${server.port}`, 'x-holdfast-token': server.token } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
          if (text.includes('"node.changed"') && text.includes(': keep-alive')) {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], csp: res.headers['content-security-policy'] as string | undefined, text });
          }
        });
      },
    );
    req.on('error', (e) => (e.message.includes('aborted') || e.message.includes('socket hang up') ? undefined : reject(e)));
    // containerd on edge-01 reports a new image (again until the watcher, started by this
    // listener, has subscribed and relayed one).
    const cd = fake.node('edge-01').containerd;
    const tick = setInterval(() => cd.publish('/images/create', 'a:1'), 100);
    req.on('close', () => clearInterval(tick));
  });
  expect(got.status).toBe(200);
  expect(got.type).toContain('text/event-stream');
  expect(got.csp).toBe(CONTENT_SECURITY_POLICY);
  expect(got.text).toContain('data: {"type":"node.changed","payload":{"node":"edge-01","topic":"/images/create","name":"a:1"}}\n\n');
  await expect.poll(() => fake.listeners.size).toBe(0);
});
