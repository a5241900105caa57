// bench:list's floor: the least any Node program that reaches a node through ssh2 does. It
// connects, checks the host key against one fingerprint, authenticates with a key, runs `true`
// and closes: no node list, no known_hosts file, no containerd, nothing listed. Built and started
// the way the CLI bundle is (one minified CommonJS file through the V8 code cache, ssh2's native
// crypto from node_modules), so its time is what Node and ssh2 themselves cost on the machine,
// beside `ssh node true` and `ssh node ctr images ls -q`.
import { readFileSync } from 'node:fs';
import { Client } from 'ssh2';
import { hostKeyFingerprint } from '../../src/core/ssh/knownHosts';

export function main(argv: string[]): Promise<number> {
  const [host, port, user, key, fingerprint] = argv.slice(3);
  return new Promise((resolve) => {
    const c = new Client();
    c.on('ready', () =>
      c.exec('true', (err, ch) => {
        if (err) return resolve(1);
        ch.resume();
        ch.on('close', () => c.end());
      }),
    );
    c.on('error', (e) => (process.stderr.write(`${e.message}\n`), resolve(1)));
    c.on('close', () => resolve(0));
    c.connect({
      host,
      port: Number(port),
      username: user,
      privateKey: readFileSync(key!),
      hostVerifier: (k: Buffer) => hostKeyFingerprint(k) === fingerprint,
    });
  });
}
