// One NodeDef for unit tests: a k3s node at `<name>.lan` with k3s's default socket and images dir.
import type { NodeDef } from '../../src/shared/domain/nodes';

export const nodeDef = (name: string): NodeDef => ({
  name,
  host: `${name}.lan`,
  port: 22,
  user: 'root',
  socket: '/run/k3s/containerd/containerd.sock',
  imagesDir: '/var/lib/rancher/k3s/agent/images',
  namespace: 'k8s.io',
});
