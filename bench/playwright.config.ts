import { defineConfig } from '@playwright/test';

// `npm run bench:ui`: the UI benchmark (bench/ui.bench.ts) in Debian's Chromium against the built
// renderer, with the e2e fixtures (loopback only). Not part of `npm test`: it measures, it does
// not judge, and what it measures depends on the machine and its load.
export default defineConfig({
  testDir: '.',
  testMatch: ['ui.bench.ts'],
  globalSetup: '../e2e/global-setup.ts',
  workers: 1,
  retries: 0,
  timeout: 300_000,
  expect: { timeout: 30_000 },
  reporter: 'list',
  outputDir: '../test-results/bench',
  projects: [
    {
      name: 'chromium',
      use: {
        browserName: 'chromium',
        headless: true,
        viewport: { width: 1360, height: 860 },
        launchOptions: {
          executablePath: '/usr/bin/chromium',
          args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
        },
      },
    },
  ],
});
