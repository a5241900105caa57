// Loopback HTTP server for `holdfast serve`: the built renderer as static files plus
// `POST /api/<channel>`, answering with the same envelopes Electron's IPC returns.
//
// Threat model: other local users/processes and web pages in the user's browser. Hence:
// bound to 127.0.0.1 only, a random bearer token on every API call (compared in constant
// time), a Host allow-list against DNS rebinding, an Origin check, JSON-only bodies with a size
// cap, a strict CSP and no directory traversal or symlink escapes for static files.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isChannel, type Envelope, type LiveEvent } from '../shared/contract';
import type { ErrorInfo } from '../shared/domain/errors';
import type { Handlers } from '../shared/handlers';
import { TOKEN_HEADER } from '../shared/serveProtocol';
import { CONTENT_SECURITY_POLICY, SECURITY_HEADERS, staticContentType } from '../shared/webSecurity';
import { packEnvelope } from '../shared/wirePack';
import { dispatch } from './dispatch';
import { limit, nameLimit } from '../core/limits';
import { logger, registerSecret } from '../core/log';

const log = logger('serve');

export type { Handlers } from '../shared/handlers';

// The policy, the headers and the content types are the desktop app's too (src/shared/webSecurity.ts).
export { CONTENT_SECURITY_POLICY };
export { TOKEN_HEADER };
export const DEFAULT_MAX_BODY_BYTES = limit('http.bodyBytes');

export interface ServerOptions {
  handlers: Handlers;
  /** Directory of the built renderer (out/renderer). */
  rendererDir: string;
  /** 0 or absent: an ephemeral port chosen by the OS. */
  port?: number;
  /** Absent: 32 random bytes, base64url. */
  token?: string;
  maxBodyBytes?: number;
  /** Live events for `GET /api/events` (Server-Sent Events); absent: that endpoint answers 404. */
  events?: EventSource;
  /** Keep-alive comment interval on the event stream (ms). */
  keepAliveMs?: number;
}

export interface EventSource {
  subscribe(cb: (e: LiveEvent) => void): () => void;
}

export interface RunningServer {
  /** http://127.0.0.1:PORT/?token=… — open this in a browser. */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

/** Constant-time token comparison (hashing first makes lengths equal and leaks nothing). */
export function tokensMatch(given: string | undefined, expected: string): boolean {
  if (typeof given !== 'string') return false;
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}

/** DNS-rebinding guard: only the literal loopback names with our port. */
export function hostAllowed(hostHeader: string | undefined, port: number): boolean {
  return hostHeader === `127.0.0.1:${port}` || hostHeader === `localhost:${port}`;
}

function send(
  res: http.ServerResponse,
  status: number,
  body: string | Buffer,
  contentType: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'Content-Type': contentType,
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(res.req.method === 'HEAD' ? undefined : body);
}

function sendEnvelope(res: http.ServerResponse, status: number, envelope: Envelope<unknown>): void {
  send(res, status, JSON.stringify(envelope), 'application/json; charset=utf-8');
}

function sendError(res: http.ServerResponse, status: number, error: ErrorInfo, extra?: Record<string, string>): void {
  send(res, status, JSON.stringify({ ok: false, error } satisfies Envelope<never>), 'application/json; charset=utf-8', extra);
}

class BodyTooLarge extends Error {}

function readBody(req: http.IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(declared) && declared > limit) {
      // Answer without reading; the 413 goes out with `Connection: close`, dropping the rest.
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      total += chunk.length;
      if (total > limit) {
        // Stop buffering but keep the socket: it must still carry the 413 answer.
        tooLarge = true;
        chunks.length = 0;
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * `GET /api/events`: the live events as Server-Sent Events, one `data:` line of JSON per event
 * and a comment line every keepAliveMs so proxies and the client notice a dead connection. The
 * token travels in the same header as every other call (the UI reads the stream with fetch(),
 * not EventSource, which cannot set headers): it never appears in a URL, a log or history.
 */
function handleEvents(req: http.IncomingMessage, res: http.ServerResponse, source: EventSource, keepAliveMs: number): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Accel-Buffering': 'no',
    Connection: 'keep-alive',
  });
  res.socket?.setNoDelay(true);
  res.write(': holdfast events\n\n');
  const unsubscribe = source.subscribe((e) => {
    res.write(`data: ${JSON.stringify(e)}\n\n`);
  });
  const ping = setInterval(() => res.write(': keep-alive\n\n'), keepAliveMs);
  const done = () => {
    clearInterval(ping);
    unsubscribe();
  };
  req.on('close', done);
  res.on('error', done);
}

async function handleApi(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  channel: string,
  ctx: { handlers: Handlers; token: string; maxBodyBytes: number; events?: EventSource; keepAliveMs: number },
): Promise<void> {
  const given = req.headers[TOKEN_HEADER];
  if (!tokensMatch(Array.isArray(given) ? undefined : given, ctx.token)) {
    sendError(res, 401, {
      code: 'REFUSED',
      message: 'Missing or wrong access token.',
      hint: 'Open the address `holdfast serve` printed, including its ?token=… part.',
    });
    return;
  }
  if (channel === 'events' && ctx.events) {
    if (req.method !== 'GET') {
      sendError(res, 405, { code: 'INVALID_INPUT', message: 'Use GET.' }, { Allow: 'GET' });
      return;
    }
    handleEvents(req, res, ctx.events, ctx.keepAliveMs);
    return;
  }
  if (!isChannel(channel)) {
    sendError(res, 404, { code: 'NOT_FOUND', message: `Unknown operation "${channel}".` });
    return;
  }
  if (req.method !== 'POST') {
    sendError(res, 405, { code: 'INVALID_INPUT', message: 'Use POST.' }, { Allow: 'POST' });
    return;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    sendError(res, 415, { code: 'INVALID_INPUT', message: 'The request body must be application/json.' });
    return;
  }
  let raw: unknown;
  try {
    const body = await readBody(req, ctx.maxBodyBytes);
    raw = body.length === 0 ? {} : JSON.parse(body.toString('utf8'));
  } catch (err) {
    if (err instanceof BodyTooLarge) {
      const which = ctx.maxBodyBytes === DEFAULT_MAX_BODY_BYTES ? `: over ${nameLimit('http.bodyBytes')}` : '';
      sendError(res, 413, { code: 'INVALID_INPUT', message: `The request body exceeds ${ctx.maxBodyBytes} bytes${which}.` }, {
        Connection: 'close',
      });
    } else {
      sendError(res, 400, { code: 'INVALID_INPUT', message: 'The request body is not valid JSON.' });
    }
    return;
  }
  const envelope = await dispatch(ctx.handlers, channel, raw);
  log.debug('api call', { channel, ok: envelope.ok, ...(envelope.ok ? {} : { error: envelope.error.code }) });
  // Record lists cross packed (src/shared/wirePack.ts); the page's api unpacks them.
  sendEnvelope(res, 200, packEnvelope(envelope));
}

/** Resolve a URL path inside root, or null if it escapes or is malformed. */
export function resolveStatic(root: string, urlPath: string): string | null {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch (err) {
    log.debug('malformed URL path refused', { err });
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const rel = decoded.endsWith('/') ? `${decoded}index.html` : decoded;
  const full = path.resolve(root, `.${path.posix.normalize(`/${rel}`)}`);
  if (full !== root && !full.startsWith(root + path.sep)) return null;
  return full;
}

async function handleStatic(req: http.IncomingMessage, res: http.ServerResponse, root: string, pathname: string) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'Method not allowed\n', 'text/plain; charset=utf-8', { Allow: 'GET, HEAD' });
    return;
  }
  const notFound = () => send(res, 404, 'Not found\n', 'text/plain; charset=utf-8');
  const candidate = resolveStatic(root, pathname);
  if (!candidate) return notFound();
  try {
    // Symlinks inside the build output must not lead outside it either.
    const real = await fs.realpath(candidate);
    if (real !== root && !real.startsWith(root + path.sep)) return notFound();
    const stat = await fs.stat(real);
    if (!stat.isFile()) return notFound();
    const body = await fs.readFile(real);
    send(res, 200, body, staticContentType(real));
  } catch (err) {
    log.debug('static file not served', { path: pathname, err });
    notFound();
  }
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const token = opts.token ?? randomBytes(32).toString('base64url');
  if (token.length < 16) throw new Error('The access token must be at least 16 characters.');
  // The token is printed in the URL on purpose; in a log line it would be a key left lying about.
  const forgetToken = registerSecret(token);
  const root = await fs.realpath(path.resolve(opts.rendererDir));
  const maxBodyBytes = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // The app service (createHandlers) carries its own event source: `holdfast serve` needs no extra wiring.
  const events = opts.events ?? (opts.handlers as Partial<{ events: EventSource }>).events;
  let port = 0;

  const server = http.createServer((req, res) => {
    void (async () => {
      if (!hostAllowed(req.headers.host, port)) {
        send(res, 403, 'Forbidden host\n', 'text/plain; charset=utf-8');
        return;
      }
      const origin = req.headers.origin;
      if (origin !== undefined && origin !== `http://127.0.0.1:${port}` && origin !== `http://localhost:${port}`) {
        sendError(res, 403, { code: 'REFUSED', message: 'Cross-origin requests are not allowed.' });
        return;
      }
      const pathname = (req.url ?? '/').split('?')[0] ?? '/';
      if (pathname.startsWith('/api/')) {
        await handleApi(req, res, pathname.slice('/api/'.length), {
          handlers: opts.handlers,
          token,
          maxBodyBytes,
          keepAliveMs: opts.keepAliveMs ?? 15_000,
          ...(events ? { events } : {}),
        });
      } else {
        await handleStatic(req, res, root, pathname);
      }
    })().catch((err: unknown) => {
      log.debug('request failed', { method: req.method, err });
      if (!res.headersSent) sendError(res, 500, { code: 'INTERNAL', message: 'Internal server error.' });
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: opts.port ?? 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/?token=${encodeURIComponent(token)}`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve, reject) => {
        forgetToken();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
