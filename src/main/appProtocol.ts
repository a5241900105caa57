// The desktop app's renderer is served from app://holdfast/, not file://. On file:// 'self' in
// the CSP is every file on the disk and a <meta> is the only place a policy can live; a standard,
// secure custom scheme is one origin holding only out/renderer, and every response carries the
// policy as a header. index.ts registers the scheme (APP_SCHEME_PRIVILEGES) and hands each
// request to serveAppRequest(); this module has no electron import, so unit tests run it.
import type { CustomScheme } from 'electron';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { logger } from '../core/log';
import { SECURITY_HEADERS, staticContentType } from '../shared/webSecurity';

const log = logger('main');

export const APP_SCHEME = 'app';
export const APP_HOST = 'holdfast';
/** What the window loads when no dev server is running. */
export const APP_ENTRY_URL = `${APP_SCHEME}://${APP_HOST}/index.html`;

/**
 * standard: URLs parse like http (relative asset URLs, one origin per host); secure: a secure
 * context, as https. supportFetchAPI and corsEnabled let the page's module scripts (Vite emits
 * `<script type="module" crossorigin>`) load from the scheme; no response grants another origin
 * anything (no Access-Control-Allow-Origin, Cross-Origin-Resource-Policy: same-origin).
 * Not bypassCSP, not allowServiceWorkers, not stream.
 */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  privileges: { standard: true, secure: true, supportFetchAPI: true, corsEnabled: true },
} satisfies CustomScheme;

/** True for a URL of our renderer's origin (app://holdfast), whatever its path. */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.hostname.toLowerCase() === APP_HOST && u.port === '' && u.username === '' && u.password === '';
  } catch (err) {
    log.debug('not an app:// URL', { url, err });
    return false;
  }
}

/** True for the renderer's page itself, app://holdfast/index.html (a query or fragment aside). */
export function isAppEntryUrl(url: string): boolean {
  return isAppUrl(url) && new URL(url).pathname === new URL(APP_ENTRY_URL).pathname;
}

/** One path segment of a file the build writes: Vite's hashed names, favicon.svg, index.html. */
const SEGMENT = /^[A-Za-z0-9_~@+-][A-Za-z0-9._~@+-]*$/;

/**
 * The file under root an app:// URL names, or null when it names none: another scheme or host,
 * a port or credentials, an encoded slash, backslash or NUL, a `.` or `..` segment (literal or
 * encoded), an empty segment, a dotfile, or any character a built file's name does not use.
 * `/` and a trailing `/` mean that directory's index.html. The query and fragment are ignored.
 */
export function resolveAppPath(root: string, url: string): string | null {
  if (!isAppUrl(url)) return null;
  // The raw path, before the URL parser folds `..` and `%2e%2e` away: they are refused, not resolved.
  const raw = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/.exec(url)?.[1] ?? '';
  const rel = (raw === '' || raw.endsWith('/') ? `${raw}index.html` : raw).replace(/^\//, '');
  const segments: string[] = [];
  for (const enc of rel.split('/')) {
    let seg: string;
    try {
      seg = decodeURIComponent(enc);
    } catch (err) {
      log.debug('app:// path refused: bad percent-encoding', { url, err });
      return null;
    }
    if (!SEGMENT.test(seg)) return null;
    segments.push(seg);
  }
  const full = path.resolve(root, ...segments);
  const inside = path.relative(root, full);
  if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return null;
  return full;
}

export interface AppResponse {
  status: number;
  headers: Record<string, string>;
  /** Absent for HEAD. */
  body?: Uint8Array;
}

const text = (status: number, message: string, method: string, extra: Record<string, string> = {}): AppResponse => ({
  status,
  headers: { ...SECURITY_HEADERS, 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...extra },
  ...(method === 'HEAD' ? {} : { body: new TextEncoder().encode(message) }),
});

/**
 * The answer to one request on app://: a regular file under root (symlinks followed only while
 * they stay inside root) with its content type, or 404; GET and HEAD only. Every answer carries
 * SECURITY_HEADERS, the Content-Security-Policy first of them.
 */
export async function serveAppRequest(root: string, request: { url: string; method: string }): Promise<AppResponse> {
  const method = request.method.toUpperCase();
  if (method !== 'GET' && method !== 'HEAD') return text(405, 'Method not allowed\n', method, { Allow: 'GET, HEAD' });
  const notFound = () => text(404, 'Not found\n', method);
  try {
    const realRoot = await fs.realpath(root);
    const candidate = resolveAppPath(realRoot, request.url);
    if (!candidate) return notFound();
    const real = await fs.realpath(candidate);
    const inside = path.relative(realRoot, real);
    if (inside === '' || inside.startsWith('..') || path.isAbsolute(inside)) return notFound();
    if (!(await fs.stat(real)).isFile()) return notFound();
    const body = method === 'HEAD' ? undefined : await fs.readFile(real);
    return {
      status: 200,
      headers: { ...SECURITY_HEADERS, 'Content-Type': staticContentType(real), 'Cache-Control': 'no-store' },
      ...(body ? { body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) } : {}),
    };
  } catch (err) {
    log.debug('app:// file not served', { url: request.url, err });
    return notFound();
  }
}
