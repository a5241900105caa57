// The embedded registry's words every view shares (shared/embeddedRegistry): when the Peers column
// applies (CLI PEERS, the app), when the fleet view does, which file set the state, a needed
// image's clause, the fleet view over a report's nodes, and an image's verdict from its
// references' (the app's rows); and a node's registries.yaml headline (shared/registryMirrors).
import { describe, expect, it } from 'vitest';
import {
  describePeerSource,
  embeddedRegistryFrom,
  fleetPeersApply,
  fleetPeerSourcesOf,
  imagePeers,
  peerServing,
  peersColumnApplies,
  type EmbeddedRegistryConfig,
  type PeerReportNode,
} from '../../../src/shared/embeddedRegistry';
import { registriesHeadline, type NodeRegistries } from '../../../src/shared/registryMirrors';

const D = 'sha256:' + 'd'.repeat(64);
const TAG = 'docker.io/library/nginx:1.27';
const DIGEST_REF = `docker.io/library/nginx@${D}`;
const SOURCE = { 'containerd.io/distribution.source.docker.io': 'library/nginx' };
const cfg = (enabled: EmbeddedRegistryConfig['enabled'], from: string | null = null): EmbeddedRegistryConfig => ({ enabled, from, mirrors: ['docker.io'], notes: [] });

describe('peersColumnApplies', () => {
  it('applies while the node turns the embedded registry on or follows its servers', () => {
    expect(peersColumnApplies(cfg('on'))).toBe(true);
    expect(peersColumnApplies(cfg('agent'))).toBe(true);
    expect(peersColumnApplies(cfg('off'))).toBe(false);
    expect(peersColumnApplies(cfg('unknown'))).toBe(false);
    expect(peersColumnApplies(null)).toBe(false);
    expect(peersColumnApplies(undefined)).toBe(false);
  });

  it('the fleet view needs a node whose own config turns it on (agents alone follow nothing)', () => {
    expect(fleetPeersApply([cfg('agent'), null, cfg('on')])).toBe(true);
    expect(fleetPeersApply([cfg('agent'), cfg('off'), undefined])).toBe(false);
  });
});

describe('embeddedRegistryFrom', () => {
  it('names the file that set it, or why none did', () => {
    expect(embeddedRegistryFrom(cfg('on', '/etc/rancher/k3s/config.yaml.d/10-spegel.yaml'))).toBe('set in /etc/rancher/k3s/config.yaml.d/10-spegel.yaml');
    expect(embeddedRegistryFrom(cfg('agent'))).toBe('not set in its config: it joins a server');
    expect(embeddedRegistryFrom(cfg('unknown'))).toBe('its config could not be read');
    expect(embeddedRegistryFrom(cfg('off'))).toBe('not set in its config');
  });
});

describe('the fleet view over a report', () => {
  const node = (name: string, names: string[], enabled: EmbeddedRegistryConfig['enabled'], missing: string[] = []): PeerReportNode => {
    const refs = names.map((n) => ({ name: n, digest: D }));
    const serving = peerServing(refs, cfg(enabled), new Map([[D, SOURCE]]));
    return {
      node: name,
      images: refs.map((r) => ({ ...r, peers: serving.get(r.name), need: { needed: true } })),
      needs: { missing: missing.map((ref) => ({ ref })) },
      embeddedRegistry: cfg(enabled, enabled === 'on' ? '/etc/rancher/k3s/config.yaml' : null),
    };
  };

  it('names the nodes that serve a needed image and the ones that lack it, within a group', () => {
    const groups: Record<string, string> = { er1: 'site-a', er2: 'site-a', far: 'site-b' };
    const sources = fleetPeerSourcesOf([node('er1', [TAG, DIGEST_REF], 'on'), node('er2', [], 'agent', [TAG]), node('far', [], 'on', [TAG])], (n) => groups[n]);
    const a = sources.find((s) => s.group === 'site-a' && s.image === TAG)!;
    expect(a).toMatchObject({ servedBy: ['er1'], missingOn: ['er2'] });
    expect(describePeerSource(a)).toBe('served by er1; missing on er2');
    // Another site's node lacks it too, but er1 is not its peer.
    const b = sources.find((s) => s.group === 'site-b')!;
    expect(describePeerSource(b)).toBe('no node can serve it; missing on far');
  });

  it('a reference without its digest reference serves no one', () => {
    const sources = fleetPeerSourcesOf([node('er1', [TAG], 'on'), node('er2', [], 'agent', [TAG])], () => undefined);
    expect(describePeerSource(sources[0]!)).toBe('no node can serve it; missing on er2');
  });
});

describe('imagePeers', () => {
  const serving = peerServing(
    [TAG, DIGEST_REF].map((name) => ({ name, digest: D })),
    cfg('on'),
    new Map([[D, SOURCE]]),
  );

  it('an image is servable when one of its references is', () => {
    const blocked = { servable: false, registry: 'docker.io', brief: 'no digest reference', reason: 'x' };
    expect(imagePeers([{ peers: blocked }, { peers: serving.get(DIGEST_REF)! }])?.brief).toBe('peers can pull it');
  });

  it('else the first verdict; none without one (CRI’s own record)', () => {
    const alone = peerServing([{ name: TAG, digest: D }], cfg('on'), new Map([[D, SOURCE]]));
    expect(imagePeers([{}, { peers: alone.get(TAG)! }])).toMatchObject({ servable: false, brief: 'no digest reference' });
    expect(imagePeers([{}])).toBeNull();
  });
});

describe('registriesHeadline', () => {
  const r = (p: Partial<NodeRegistries>): NodeRegistries => ({ file: '/etc/rancher/k3s/registries.yaml', state: 'read', mirrors: [], configs: 0, notes: [], ...p });
  it('says what the file holds, never a credential', () => {
    expect(registriesHeadline(r({ state: 'absent' }))).toBe('no registries.yaml');
    expect(registriesHeadline(r({ state: 'unreadable', notes: ['permission denied'] }))).toBe('not read (permission denied)');
    expect(registriesHeadline(r({ mirrors: [{ registry: 'docker.io', endpoints: ['https://mirror.lan'], rewrites: [] }], configs: 1 }))).toBe('1 mirror, configs: 1 (credentials stay on the node)');
    expect(registriesHeadline(r({ state: 'not-understood', configs: null }))).toBe('0 mirrors, configs not counted, not all understood');
  });
});
