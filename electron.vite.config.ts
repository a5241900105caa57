// Builds the thin Electron shell: main (ESM), the sandboxed preload (one CommonJS file, as
// sandboxed preloads require) and the renderer. out/renderer is also what `holdfast serve` serves.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'electron-vite';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const r = (p: string) => resolve(root, p);

/**
 * The dev server's React refresh preamble is an inline script and HMR needs a websocket; the
 * strict CSP in index.html forbids both. Relax it for `electron-vite dev` only — builds keep it.
 */
function devCsp(): Plugin {
  return {
    name: 'holdfast:dev-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      return html
        .replace("script-src 'self'", "script-src 'self' 'unsafe-inline'")
        .replace("connect-src 'self'", "connect-src 'self' ws://localhost:* ws://127.0.0.1:*");
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
    // Relative asset URLs: works from file:// in Electron and from / under `holdfast serve`.
    base: './',
    plugins: [react(), devCsp()],
    build: {
      outDir: r('out/renderer'),
      emptyOutDir: true,
      sourcemap: false,
      minify: true,
      rolldownOptions: { input: { index: r('src/renderer/index.html') } },
    },
  },
});
