// The app's changed-host-key panel says each thing once (#49 item 13): the two fingerprints in
// their rows, what a changed key can mean and what to do in the error's hint, no sentence twice.
// Rendered to markup by React itself over the real store (no DOM needed).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ErrorInfo } from '../../../src/shared/domain/errors';
import type { NodeDef } from '../../../src/shared/domain/nodes';
import { ConnectionPanel } from '../../../src/renderer/components/ConnectionPanel';
import { StoreProvider } from '../../../src/renderer/context';
import { createAppStore } from '../../../src/renderer/store';
import { fakeApi } from '../../doubles/api';

const node: NodeDef = {
  name: 'edge-02',
  host: '10.20.0.12',
  port: 22,
  user: 'root',
  socket: '/run/k3s/containerd/containerd.sock',
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  namespace: 'k8s.io',
};
const OLD = 'SHA256:MZmquwWXsruUBq73eVfjuHtoaHqLknmO3iD3kI/ki90';
const NEW = 'SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s';
const KNOWN = '/home/tech/.ssh/known_hosts';

/** As core's host key check words it (src/core/ssh/hostKey.ts). */
const changed: ErrorInfo = {
  code: 'HOST_KEY_CHANGED',
  message: `The host key of 10.20.0.12:22 has changed: it now presents ssh-ed25519 ${NEW}, but ${KNOWN} records ssh-ed25519 ${OLD}.`,
  fingerprint: NEW,
  expectedFingerprint: OLD,
  hint:
    'This can mean someone is intercepting the connection, or the node was reinstalled. Confirm the new fingerprint on the node itself ' +
    `(ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub); only then remove the old entry at ${KNOWN} line 3 (ssh-keygen -R 10.20.0.12 -f ${KNOWN}) and connect again.`,
};

/** The panel's text as a person reads it (tags dropped, one space between words). */
function text(error: ErrorInfo): string {
  const store = createAppStore(fakeApi({}));
  return renderToStaticMarkup(createElement(StoreProvider, { store, children: createElement(ConnectionPanel, { node, error, onCancel() {} }) }))
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#x27;/g, "'")
    .replace(/\s+/g, ' ');
}

const count = (s: string, part: string) => s.split(part).length - 1;

describe('the changed host key panel', () => {
  it('shows each fingerprint once, and what it can mean and what to do once', () => {
    const t = text(changed);
    expect(count(t, OLD)).toBe(1);
    expect(count(t, NEW)).toBe(1);
    expect(count(t, 'intercepting')).toBe(1);
    expect(count(t, 'reinstalled')).toBe(1);
    expect(count(t, 'will not connect')).toBe(1);
    expect(t).toContain('ssh-keygen -R 10.20.0.12');
    expect(t).toContain('10.20.0.12 presented differs from the one on record');
  });

  it('a key that changed during a session (no hint) still says what happened', () => {
    const t = text({ code: 'HOST_KEY_CHANGED', message: `10.20.0.12:22 switched to another host key (${NEW}) during the session.`, fingerprint: NEW, expectedFingerprint: OLD });
    expect(t).toContain('during the session');
    expect(count(t, OLD)).toBe(1);
  });
});
