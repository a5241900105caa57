import { defineConfig, type Project } from '@playwright/test';
import { electronBinary } from './e2e/electron-binary';

// End-to-end tests drive the built renderer (out/renderer) in Debian's Chromium, served by the
// same loopback server `holdfast serve` uses. No browser download, no network. Every spec takes
// `test` from e2e/fixtures.ts, whose auto fixture fails any test whose page asks for anything
// beyond the loopback.
//
// Where an Electron binary is installed (`npx install-electron`; found without running the
// electron package, whose index.js would try to download one), an `electron` project runs the
// same specs against the desktop app (preload + IPC instead of HTTP, hidden by the fixtures).
// Without one the project does not exist at all (not a pile of skipped tests).
const chromiumUse = {
  browserName: 'chromium' as const,
  headless: true,
  viewport: { width: 1360, height: 860 },
  launchOptions: {
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  },
};

const projects: Project[] = [{ name: 'chromium', use: chromiumUse }];
if (electronBinary()) {
  // The lab specs drive the real service, which the desktop app runs itself over the same
  // HOLDFAST_HOME; the fixture launches the app instead of serving the UI. Specs over fake
  // nodes (ui-*, perf, screenshots) need the fakes in the test process: HTTP only.
  projects.push({ name: 'electron', use: chromiumUse, testMatch: ['**/lab-*.spec.ts'] });
}

export default defineConfig({
  testDir: 'e2e',
  globalSetup: './e2e/global-setup.ts',
  workers: 1,
  fullyParallel: false,
  forbidOnly: true,
  retries: 0,
  timeout: 30_000,
  // A UI answer is waited for up to 10 s: with two full CI runs on this 2-core machine at once, an
  // apply error took over 5 s to show once (what is asserted is the text, never the wait).
  expect: { timeout: 10_000 },
  reporter: 'list',
  outputDir: 'test-results/e2e',
  use: {
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
  projects,
});
