// grpc-js's words for a containerd that does not answer never reach the technician (issue #49,
// item 12): one plain sentence, what to check, grpc-js's text kept in the error's cause.
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { GrpcContainerdClient } from '../../../../src/core/containerd/client';
import { HoldfastError } from '../../../../src/core/errors';

// As grpc-js 1.14 words them (load-balancer-pick-first.js, transport.js, subchannel-call.js).
const RECORDED = [
  'No connection established. Last error: read ECONNRESET (2026-12-07T11:02:03.456Z). Resolution note: ',
  'No connection established. Last error: Failed to connect (2026-12-07T11:02:03.456Z). Resolution note: ',
  'No connection established. Last error: connect ECONNREFUSED /tmp/hf-tunnel-1/c.sock (2026-12-07T11:02:03.456Z). Resolution note: ',
  'Connection dropped',
  'No connection established',
];

const unavailable = (details: string): grpc.ServiceError =>
  Object.assign(new Error(`14 UNAVAILABLE: ${details}`), { code: grpc.status.UNAVAILABLE, details, metadata: new grpc.Metadata() });

const WHERE = 'lab1-n1 (/run/k3s/containerd/containerd.sock)';

describe('UNAVAILABLE from containerd, through the SSH tunnel', () => {
  const cd = new GrpcContainerdClient({ target: 'unix:/nonexistent/hf.sock', namespace: 'k8s.io', describe: WHERE, overSsh: true });
  it.each(RECORDED)('%s → one plain sentence and what to check', (details) => {
    const e = cd.mapError(unavailable(details), 'images.List');
    expect(e.code).toBe('CONTAINERD_UNAVAILABLE');
    expect(e.message).toMatch(/^containerd on lab1-n1 \(\/run\/k3s\/containerd\/containerd\.sock\) stopped answering through the SSH tunnel: /);
    expect(`${e.message} ${e.hint}`).not.toMatch(/Resolution note|No connection established|Last error|ECONN|\d{4}-\d\d-\d\dT/);
    expect(e.hint).toMatch(/k3s or RKE2 \(or containerd\) runs there/);
    expect((e.cause as grpc.ServiceError).details).toBe(details);
  });

  it('names a reset connection', () => {
    expect(cd.mapError(unavailable(RECORDED[0]!), 'images.List').message).toMatch(/: its socket closed the connection$/);
  });

  afterAll(() => cd.close());
});

describe('UNAVAILABLE from a real grpc-js call on the node itself (no socket)', () => {
  it('says the socket does not exist, without grpc-js text', async () => {
    const cd = new GrpcContainerdClient({ target: 'unix:/nonexistent/holdfast-unavailable.sock', namespace: 'k8s.io', describe: 'here (/nonexistent/holdfast-unavailable.sock)' });
    try {
      const e = await cd.version().then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(HoldfastError);
      expect((e as HoldfastError).message).toBe('containerd is not answering on here (/nonexistent/holdfast-unavailable.sock): its socket does not exist');
    } finally {
      cd.close();
    }
  });
});
