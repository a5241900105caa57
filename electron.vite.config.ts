// Builds the thin Electron shell: main (ESM), the sandboxed preload (one CommonJS file, as
// sandboxed preloads require) and the renderer. out/renderer is also what `holdfast serve` serves.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { META_CONTENT_SECURITY_POLICY } from './src/shared/webSecurity';

const root = fileURLToPath(new URL('.', import.meta.url));
const r = (p: string) => resolve(root, p);

/** Where index.html wants the CSP <meta>: after the charset, before anything it governs. */
const CSP_PLACEHOLDER = '<!-- holdfast:csp-meta -->';

/**
 * index.html's CSP <meta>, from the one policy (src/shared/webSecurity.ts); the servers send the
 * full policy as a header (`holdfast serve`, the app's app:// protocol), the tag covers the page
 * wherever it is opened. The dev server's React refresh preamble is an inline script and HMR
 * needs a websocket, which the policy forbids: `electron-vite dev` relaxes it, builds never.
 */
function cspMeta(): Plugin {
  let dev = false;
  return {
    name: 'holdfast:csp-meta',
    configResolved(config) {
      dev = config.command === 'serve';
    },
    transformIndexHtml: {
      order: 'pre',
      handler(html) {
        if (!html.includes(CSP_PLACEHOLDER)) throw new Error(`index.html lacks ${CSP_PLACEHOLDER}: the page would have no CSP <meta>`);
        const policy = dev
          ? META_CONTENT_SECURITY_POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
              "connect-src 'self'",
              "connect-src 'self' ws://localhost:* ws://127.0.0.1:*",
            )
          : META_CONTENT_SECURITY_POLICY;
        return html.replace(CSP_PLACEHOLDER, `<meta http-equiv="Content-Security-Policy" content="${policy}" />`);
      },
    },
  };
}

export default defineConfig({
  main: {
    build: {
      outDir: r('out/main'),
      rolldownOptions: { input: { index: r('src/main/index.ts') } },
    },
  },
  preload: {
    build: {
      outDir: r('out/preload'),
      // Sandboxed preloads cannot require node_modules: bundle everything (it imports only the
      // zod-free channel map, src/shared/channels.ts, and electron).
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: r('src/preload/index.ts') },
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: r('src/renderer'),
    // Relative asset URLs: work under app://holdfast/ in Electron and from / under `holdfast serve`.
    base: './',
    plugins: [react(), cspMeta()],
    build: {
      outDir: r('out/renderer'),
      emptyOutDir: true,
      sourcemap: false,
      minify: true,
      rolldownOptions: { input: { index: r('src/renderer/index.html') } },
    },
  },
});
