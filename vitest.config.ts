import { defineConfig } from 'vitest/config';

// Two projects: `unit` (pure logic, runs anywhere) and `integration` (a real containerd and a
// real OpenSSH sshd per lab node, so it needs root and the Debian packages .ci/run installs).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/lab/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Each file starts its own lab nodes; two at a time fit the 2-core machines.
          maxWorkers: 2,
        },
      },
    ],
  },
});
