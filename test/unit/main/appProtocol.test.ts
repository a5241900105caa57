// The desktop app's app:// protocol (src/main/appProtocol.ts): which file a URL names, what goes
// back for it, over a real directory. Electron itself only hands requests to serveAppRequest().
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { APP_ENTRY_URL, APP_SCHEME_PRIVILEGES, isAppEntryUrl, isAppUrl, resolveAppPath, serveAppRequest } from '../../../src/main/appProtocol';
import { CONTENT_SECURITY_POLICY, META_CONTENT_SECURITY_POLICY, SECURITY_HEADERS } from '../../../src/shared/webSecurity';

let base: string; // holds root, and a secret beside it
let root: string; // stands for out/renderer
const INDEX = '<!doctype html><title>Holdfast</title>';

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'hf-appproto-')));
  root = path.join(base, 'renderer');
  mkdirSync(path.join(root, 'assets'), { recursive: true });
  writeFileSync(path.join(root, 'index.html'), INDEX);
  writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(root, 'assets', 'index-DkEu3T-9.js'), 'console.log(1)');
  writeFileSync(path.join(root, 'assets', 'index-CHnHMON7.css'), 'body{}');
  writeFileSync(path.join(root, 'assets', 'inter-latin.woff2'), 'wOF2');
  writeFileSync(path.join(root, 'assets', 'blob.bin'), 'x');
  writeFileSync(path.join(root, '.env'), 'SECRET=1');
  writeFileSync(path.join(base, 'secret.txt'), 'secret');
  symlinkSync(path.join(base, 'secret.txt'), path.join(root, 'assets', 'escape.js'));
  symlinkSync(path.join(root, 'favicon.svg'), path.join(root, 'assets', 'icon.svg'));
});

const get = (url: string, method = 'GET') => serveAppRequest(root, { url, method });
const bodyText = (r: { body?: Uint8Array }) => new TextDecoder().decode(r.body);

describe('resolveAppPath', () => {
  it('maps app://holdfast/ paths to files under the root; / is index.html', () => {
    expect(resolveAppPath(root, APP_ENTRY_URL)).toBe(path.join(root, 'index.html'));
    expect(resolveAppPath(root, 'app://holdfast/')).toBe(path.join(root, 'index.html'));
    expect(resolveAppPath(root, 'app://holdfast')).toBe(path.join(root, 'index.html'));
    expect(resolveAppPath(root, 'app://holdfast/assets/index-DkEu3T-9.js?v=1#x')).toBe(path.join(root, 'assets', 'index-DkEu3T-9.js'));
    expect(resolveAppPath(root, 'app://holdfast/assets/')).toBe(path.join(root, 'assets', 'index.html'));
  });

  it('refuses traversal, literal or encoded, before the URL parser can fold it away', () => {
    for (const url of [
      'app://holdfast/../secret.txt',
      'app://holdfast/assets/../../secret.txt',
      'app://holdfast/%2e%2e/secret.txt',
      'app://holdfast/%2E%2E/secret.txt',
      'app://holdfast/.%2e/secret.txt',
      'app://holdfast/assets/./index-DkEu3T-9.js',
      'app://holdfast/..%2fsecret.txt',
      'app://holdfast/..%2Fsecret.txt',
      'app://holdfast/assets%2findex-DkEu3T-9.js',
      'app://holdfast/..%5csecret.txt',
      'app://holdfast/assets%5Cindex-DkEu3T-9.js',
      'app://holdfast/index.html%00.js',
      'app://holdfast/%252e%252e/secret.txt',
      'app://holdfast//etc/passwd',
      'app://holdfast/%2fetc%2fpasswd',
      'app://holdfast/C:%5cWindows',
      'app://holdfast/.env',
      'app://holdfast/%E0%A4%A',
    ]) {
      expect(resolveAppPath(root, url), url).toBeNull();
    }
  });

  it('refuses every other scheme, host, port or credentials', () => {
    for (const url of [
      'file:///etc/passwd',
      'https://holdfast/index.html',
      'app://evil/index.html',
      'app://holdfast.evil/index.html',
      'app://holdfast:8080/index.html',
      'app://user@holdfast/index.html',
      'app:holdfast/index.html',
      'not a url',
    ]) {
      expect(resolveAppPath(root, url), url).toBeNull();
    }
  });
});

describe('serveAppRequest', () => {
  it('answers every response, found or not, with the CSP header and the other security headers', async () => {
    for (const r of [await get(APP_ENTRY_URL), await get('app://holdfast/missing.js'), await get('app://holdfast/../secret.txt'), await get(APP_ENTRY_URL, 'POST')]) {
      expect(r.headers['Content-Security-Policy']).toBe(CONTENT_SECURITY_POLICY);
      expect(r.headers).toMatchObject(SECURITY_HEADERS);
      expect(r.headers['X-Content-Type-Options']).toBe('nosniff');
    }
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe');
  });

  it('serves the files with their content types', async () => {
    const index = await get(APP_ENTRY_URL);
    expect(index.status).toBe(200);
    expect(bodyText(index)).toBe(INDEX);
    const types: Record<string, string> = {
      'app://holdfast/': 'text/html; charset=utf-8',
      'app://holdfast/assets/index-DkEu3T-9.js': 'text/javascript; charset=utf-8',
      'app://holdfast/assets/index-CHnHMON7.css': 'text/css; charset=utf-8',
      'app://holdfast/favicon.svg': 'image/svg+xml',
      'app://holdfast/assets/inter-latin.woff2': 'font/woff2',
      'app://holdfast/assets/blob.bin': 'application/octet-stream',
    };
    for (const [url, type] of Object.entries(types)) {
      const r = await get(url);
      expect(r.status, url).toBe(200);
      expect(r.headers['Content-Type'], url).toBe(type);
    }
    expect(bodyText(await get('app://holdfast/assets/index-DkEu3T-9.js'))).toBe('console.log(1)');
  });

  it('answers 404 for a path outside the root, a symlink leading out of it, a directory or a missing file', async () => {
    for (const url of ['app://holdfast/../secret.txt', 'app://holdfast/%2e%2e/secret.txt', 'app://holdfast/assets/escape.js', 'app://holdfast/assets', 'app://holdfast/nope.js', 'app://evil/index.html']) {
      const r = await get(url);
      expect(r.status, url).toBe(404);
      expect(bodyText(r), url).not.toContain('secret');
    }
    // A symlink that stays inside the root is followed.
    const icon = await get('app://holdfast/assets/icon.svg');
    expect([icon.status, icon.headers['Content-Type']]).toEqual([200, 'image/svg+xml']);
  });

  it('takes GET and HEAD only; HEAD has no body', async () => {
    const head = await get(APP_ENTRY_URL, 'HEAD');
    expect([head.status, head.body]).toEqual([200, undefined]);
    const post = await get(APP_ENTRY_URL, 'POST');
    expect([post.status, post.headers['Allow']]).toEqual([405, 'GET, HEAD']);
  });
});

describe('the app:// scheme', () => {
  it('is standard and secure, and bypasses nothing', () => {
    expect(APP_SCHEME_PRIVILEGES.scheme).toBe('app');
    expect(APP_SCHEME_PRIVILEGES.privileges).toMatchObject({ standard: true, secure: true });
    expect(APP_SCHEME_PRIVILEGES.privileges).not.toHaveProperty('bypassCSP');
    expect(APP_SCHEME_PRIVILEGES.privileges).not.toHaveProperty('allowServiceWorkers');
  });

  it('trusts only its own page for IPC', () => {
    expect(isAppEntryUrl('app://holdfast/index.html')).toBe(true);
    expect(isAppEntryUrl('app://holdfast/index.html#nodes')).toBe(true);
    expect(isAppEntryUrl('app://holdfast/assets/index-DkEu3T-9.js')).toBe(false);
    expect(isAppEntryUrl('app://other/index.html')).toBe(false);
    expect(isAppEntryUrl('file:///app/out/renderer/index.html')).toBe(false);
    expect(isAppUrl('app://holdfast/favicon.svg')).toBe(true);
    expect(isAppUrl('app://HOLDFAST/favicon.svg')).toBe(true); // hosts are case-insensitive
  });

  it('has the meta policy equal to the header policy minus frame-ancestors', () => {
    expect(META_CONTENT_SECURITY_POLICY).toBe(CONTENT_SECURITY_POLICY.replace("; frame-ancestors 'none'", ''));
  });
});
