// The seeded lab (`npm run lab -- --seed`), in one place for the lab, the tests and the e2e specs:
// the sample archive every node gets, and what the server's kubectl answers — a Deployment whose
// image that archive brings and a CronJob whose image no node has (a needed image missing).
import { join } from 'node:path';
import { writeImageArchive } from './fixtures.ts';
import type { WorkloadDescription } from './workloads.ts';

export const SEED_SAMPLE_IMAGE = 'docker.io/library/holdfast-sample:1.0';
export const SEED_REPORT_IMAGE = 'docker.io/library/holdfast-report:1.0';
/** The sample archive's name in the images dir. */
export const SEED_ARCHIVE = 'holdfast-sample.tar.gz';

/** Writes the sample archive into an images dir (host side); a k3s start then imports and pins it. */
export async function writeSeedArchive(hostImagesDir: string): Promise<void> {
  await writeImageArchive(join(hostImagesDir, SEED_ARCHIVE), {
    format: 'docker',
    compression: 'gzip',
    images: [{ name: SEED_SAMPLE_IMAGE, seed: 'holdfast-sample' }],
  });
}

/**
 * The server's kubectl answer: every lab node (the first is the server), and with `seed` the
 * Deployment default/sample on the first node and the CronJob default/nightly-report.
 * `digests` gives running containers the image digests the server's node really has.
 */
export function seedWorkloads(nodeNames: string[], k3s: string, runtime: string, digests: Record<string, string>, seed = true): WorkloadDescription {
  return {
    nodes: nodeNames.map((name, i) => ({ name, addresses: ['127.0.0.1'], role: i === 0 ? 'server' : 'agent', kubeletVersion: k3s, containerRuntimeVersion: runtime })),
    ...(seed
      ? {
          deployments: [{ namespace: 'default', name: 'sample', image: SEED_SAMPLE_IMAGE, replicas: 1, node: nodeNames[0]! }],
          cronJobs: [{ namespace: 'default', name: 'nightly-report', image: SEED_REPORT_IMAGE, schedule: '0 2 * * *' }],
          digests,
        }
      : {}),
  };
}
