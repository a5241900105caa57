// containerd 2.2 and later print a cgroup v1 deprecation warning on stderr at every `ctr` call on a
// cgroup v1 host (docs/k3s-facts.md, "Which containerd k3s ships"). Holdfast itself runs no ctr
// (it speaks containerd's API); the lab and the tests that read ctr's output read its stdout
// only, through lab/exec run(), and must parse the same whether the warning is there or not.
import { describe, expect, it } from 'vitest';
import { parseCtrImagesLs } from '../../../lab/k3s';
import { CommandError, run } from '../../../lab/exec';
import { parseCtrImages } from '../../integration/support';

// `ctr -n k8s.io images ls` as containerd 2.x prints it (REF TYPE DIGEST SIZE PLATFORMS LABELS).
const LS = [
  'REF                             TYPE                                                 DIGEST                                                                  SIZE      PLATFORMS   LABELS',
  `docker.io/library/app:1         application/vnd.oci.image.index.v1+json              sha256:${'a'.repeat(64)} 2.1 KiB   linux/amd64 io.cattle.k3s.pinned=pinned,io.cri-containerd.pinned=pinned`,
  `registry.local/site/tool:2      application/vnd.docker.distribution.manifest.v2+json sha256:${'b'.repeat(64)} 1.0 MiB   linux/amd64 -`,
  '',
].join('\n');

// A deprecation warning as ctr's logrus logger writes it to stderr (text form, not a terminal);
// the wording stands for any line there: whatever it says, it must not reach a parser.
const WARNING =
  'time="2026-12-03T09:41:07Z" level=warning msg="DEPRECATION: support for cgroup v1 is deprecated and will be removed in a future release; set CONTAINERD_SUPPRESS_DEPRECATION_WARNINGS=true to silence this warning"';

/** A real child process that answers as ctr does: the listing on stdout, the warning on stderr. */
const ctrLike = (stdout: string, stderr: string, code = 0) =>
  run(['sh', '-c', 'printf "%s" "$1"; printf "%s\\n" "$2" >&2; exit "$3"', 'ctr', stdout, stderr, String(code)]);

describe("ctr's stdout only", () => {
  it('the listing parses the same with and without the stderr warning', async () => {
    const quiet = await ctrLike(LS, '');
    const warned = await ctrLike(LS, WARNING);
    expect(warned).toBe(quiet);
    expect(warned).not.toContain('DEPRECATION');

    const lab = parseCtrImagesLs(warned);
    expect(lab).toEqual([
      { name: 'docker.io/library/app:1', mediaType: 'application/vnd.oci.image.index.v1+json', digest: `sha256:${'a'.repeat(64)}`, labels: { 'io.cattle.k3s.pinned': 'pinned', 'io.cri-containerd.pinned': 'pinned' } },
      { name: 'registry.local/site/tool:2', mediaType: 'application/vnd.docker.distribution.manifest.v2+json', digest: `sha256:${'b'.repeat(64)}`, labels: {} },
    ]);
    expect(parseCtrImages(warned)).toEqual(lab.map((i) => ({ ref: i.name, digest: i.digest, labels: i.labels })));
    // `images ls -q`: one name a line, nothing else
    expect((await ctrLike('docker.io/library/app:1\nregistry.local/site/tool:2\n', WARNING)).split('\n').filter(Boolean)).toEqual(['docker.io/library/app:1', 'registry.local/site/tool:2']);
  });

  it('had the warning been merged into stdout, the first line would have been taken for the header', () => {
    // Why it matters: both parsers skip the first line as the header, so a merged warning line
    // would shift the table and drop the first image.
    expect(parseCtrImagesLs(`${WARNING}\n${LS}`)).not.toEqual(parseCtrImagesLs(LS));
  });

  it('a failing ctr still reports its stderr (the warning included) as the error, never as output', async () => {
    const e = await ctrLike('', `${WARNING}\nctr: image "x:1": not found`, 1).catch((err: unknown) => err);
    expect(e).toBeInstanceOf(CommandError);
    expect((e as CommandError).stdout).toBe('');
    expect((e as CommandError).stderr).toContain('ctr: image "x:1": not found');
  });
});
