import { defineConfig } from 'vitest/config';

// Projects: `unit` (pure logic, runs anywhere) and `integration` (a real containerd with its CRI
// plugin and a real OpenSSH sshd per lab node, so it needs root and what .ci/run installs).
// Integration runs on containerd 2.x, the line current k3s ships; the pin, fate and import
// suites run again on 1.7 (older k3s releases) and Debian's 1.6 (no CRI pinning at all), because
// a test proves only what it runs against.
// Timeouts are hang guards, not speed checks (speed is measured in bench/): generous enough for a
// 2-core box running other work too.
const LAB_INTEGRATION = {
  environment: 'node' as const,
  testTimeout: 240_000,
  hookTimeout: 300_000,
  // Each file starts its own lab nodes; two at a time fit the 2-core machines.
  maxWorkers: 2,
};

/** The suites whose outcome depends on the containerd line. */
const VERSION_MATRIX = [
  'test/integration/pins.test.ts',
  'test/integration/import.test.ts',
  'test/integration/writes.test.ts',
  'test/integration/fateMatrix.test.ts',
  // the .cache.json rules, forecast against the emulated start
  'test/integration/cacheRules.test.ts',
  'test/integration/protection.test.ts',
  'test/integration/needs.test.ts',
  // a pin set kept on the node: what CRI honours differs by line
  'test/integration/guard.test.ts',
  'test/integration/imageVolumes.test.ts',
  'test/integration/direct.test.ts',
  // direct delivery's docker-save manifests must be byte for byte what each line's importer writes
  'test/integration/directDigest.test.ts',
  // a refused archive leaves each line's containerd untouched; provenance labels on what it wrote
  'test/integration/importVerify.test.ts',
  'test/integration/bundleVerify.test.ts',
  // verify on what each line's containerd records: verdicts as labels, nothing else changed
  'test/integration/verify.test.ts',
  'test/lab/k3s.test.ts',
  // the UI tests' fake node answers as each line's containerd does
  'test/integration/doubles-contract.test.ts',
];

/**
 * The suites run again on RKE2-shaped nodes (lab/containerd.ts: its images dir, pin label, `rke2`
 * binary and kubectl), on containerd 2.x: pinning, fate prediction, import and inspection
 * (`images`, `archives`, `protection`) — what depends on where the distro keeps things and how it
 * labels them. The rest (SSH, upload plumbing, the UI's doubles) does not look at the distro.
 */
const RKE2_SUITES = [
  'test/integration/pins.test.ts',
  'test/integration/fateMatrix.test.ts',
  'test/integration/import.test.ts',
  'test/integration/images.test.ts',
  'test/integration/rke2Lists.test.ts',
];

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          environment: 'node',
          // key derivation of encrypted test keys and the fuzz suites are CPU-bound
          testTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/lab/**/*.test.ts'],
          env: { HOLDFAST_LAB_CONTAINERD: '2' },
          ...LAB_INTEGRATION,
        },
      },
      ...(['1.7', '1.6'] as const).map((line) => ({
        test: {
          name: `integration-${line}`,
          include: VERSION_MATRIX,
          env: { HOLDFAST_LAB_CONTAINERD: line },
          ...LAB_INTEGRATION,
        },
      })),
      {
        test: {
          name: 'integration-rke2',
          include: RKE2_SUITES,
          env: { HOLDFAST_LAB_CONTAINERD: '2', HOLDFAST_LAB_DISTRO: 'rke2' },
          ...LAB_INTEGRATION,
        },
      },
    ],
  },
});
