// The job card's words for a direct delivery (issue #35), as rendered: the phases a running node
// shows and the lines of a finished one. Rendered to markup by React itself (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { Job, JobNodeProgress } from '../../../src/shared/domain/jobs';
import { JobCard } from '../../../src/renderer/components/JobCard';

const node = (patch: Partial<JobNodeProgress>): JobNodeProgress => ({
  node: 'edge1',
  state: 'running',
  phase: 'uploading',
  bytesDone: 512 * 1024,
  bytesTotal: 1024 * 1024,
  rate: 256 * 1024,
  eta: 2,
  message: 'sending 2 of 3 missing blobs',
  ...patch,
});

const job = (n: JobNodeProgress, options: Job['options'], state: Job['state'] = n.state): Job => ({
  id: 'j1',
  kind: 'import',
  title: 'Deliver site-api-3.1.tar to edge1',
  state,
  createdAt: '2026-12-05T17:00:00Z',
  finishedAt: state === 'running' ? null : '2026-12-05T17:01:00Z',
  progress: state === 'running' ? 0.4 : 1,
  nodes: [n],
  archive: { path: '/bundles/site-api-3.1.tar', size: 556 * 1024, sha256: null, format: 'oci', images: 2 },
  options,
});

/** The card's text as a person reads it (tags dropped, one space between words). */
const text = (j: Job): string =>
  renderToStaticMarkup(createElement(JobCard, { job: j }))
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/\s+/g, ' ');

const DIRECT = { pin: true, removeArchive: false, direct: true };

describe('job card of a direct delivery', () => {
  it('a running node is sending, then unpacking, then verifying: never uploading nor waiting for k3s', () => {
    const sending = text(job(node({}), DIRECT));
    expect(sending).toContain('edge1 Sending');
    expect(sending).toContain('Checking Sending Unpacking Pinning Verifying Done');
    expect(sending).toContain('sending 2 of 3 missing blobs');
    expect(sending).toContain('512 KiB of 1 MiB');
    expect(sending).toContain('straight into containerd · durable pins');
    expect(sending).not.toMatch(/Uploading|Importing|k3s|Removing|archive removed/);

    const unpacking = text(job(node({ phase: 'importing', message: 'unpacking layers for CRI' }), DIRECT));
    expect(unpacking).toContain('edge1 Unpacking');
    expect(unpacking).toContain('unpacking layers for CRI');
    expect(unpacking).not.toMatch(/Importing|k3s/);

    const failed = text(job(node({ state: 'failed', phase: 'uploading', error: { code: 'UNREACHABLE', message: 'edge1 went away' } }), DIRECT, 'failed'));
    expect(failed).toContain('Failed while sending');
  });

  it('a finished node shows the summary, with no archive name on the node nor its SHA-256', () => {
    const summary = 'sent 546 KiB in 7 blobs, 0 of 7 were already there, unpacked 3 layers (overlayfs), 4 references pinned durably, verified';
    const done = text(
      job(node({ state: 'succeeded', phase: 'done', message: summary, result: { relPath: '', sha256: '', uploaded: true, resumedFrom: 0, summary } }), DIRECT),
    );
    expect(done).toContain(`edge1 Done ${summary}`);
    expect(done).not.toMatch(/sha256|SHA-256|images dir|k3s|archive removed/i);
  });

  it('an import through the images dir keeps its own words', () => {
    const t = text(job(node({ message: '' }), { pin: true, removeArchive: true }));
    expect(t).toContain('edge1 Uploading');
    expect(t).toContain('Checking Uploading Verifying Importing Pinning Removing archive Done');
    expect(t).toContain('durable pins · archive removed after');
    expect(t).not.toContain('straight into containerd');
  });
});
