// The one home of the renderer's web security: its Content-Security-Policy, the headers every
// response of it carries and the content types of its files. Three places serve the built
// renderer (out/renderer) and all take them from here: `holdfast serve` over loopback HTTP
// (src/server/http.ts), the desktop app's app:// protocol (src/main/appProtocol.ts) and the
// <meta> tag the build writes into index.html (electron.vite.config.ts).

const DIRECTIVES = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'none'",
];

/** The policy sent as a header on every response of the renderer. */
export const CONTENT_SECURITY_POLICY = DIRECTIVES.join('; ');

/**
 * The same policy for a `<meta http-equiv>` tag: without frame-ancestors, which browsers ignore
 * there (with a console error). Both servers send the full policy as a header; the tag covers
 * the dev server, which sends none.
 */
export const META_CONTENT_SECURITY_POLICY = DIRECTIVES.filter((d) => !d.startsWith('frame-ancestors ')).join('; ');

/** Headers on every response of the renderer, whichever server sends it. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const MIME: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The Content-Type of a renderer file, by its name's last extension (any case); an unknown one is
 * application/octet-stream, which nosniff keeps from running as script or style.
 */
export function staticContentType(fileName: string): string {
  const m = /\.[^./\\]+$/.exec(fileName);
  return (m && MIME[m[0].toLowerCase()]) ?? 'application/octet-stream';
}
